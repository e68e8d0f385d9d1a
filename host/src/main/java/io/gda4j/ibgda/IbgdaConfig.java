package io.gda4j.ibgda;

import io.gda4j.config.Setting;
import io.gda4j.config.SettingException;
import io.gda4j.config.Settings;
import io.gda4j.nic.NicChoice;
import io.gda4j.nic.NicConfig;
import io.gda4j.nic.RingPlacement;
import io.gda4j.nic.topology.NicPlacement;
import io.gda4j.nic.topology.PathType;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * Settings of the IBGDA transport, each with a system property ({@code *_PROP_NAME}), an environment variable
 * ({@code *_ENV}) and a default ({@code *_DEFAULT}); a property beats the environment, which beats the default
 * ({@link Setting}). Resolved once per world by {@link IbgdaTransport}, throwing a {@link SettingException} that
 * names the variable or property of a bad value; {@code gda4j info} prints {@link #SETTINGS}.
 *
 * @param nic          which NIC: auto (mlx5 if a device exists, else emulated), mlx5 or emulated
 *                     ({@link NicConfig#NIC})
 * @param placement    which RDMA device (and port) each local rank uses, and how far from its GPU it may be
 *                     ({@link NicPlacement}: {@code GDA4J_NIC_DEVICE}, {@code GDA4J_NIC_GDR_LEVEL})
 * @param flush        when quiet ends with the PCIe flush through the null MR
 * @param sqWqebbs     send queue depth of every QP in WQEBBs (a power of two)
 * @param qpsPerPeer   RC QPs from each rank to each IBGDA peer: a kernel's warps (or the channels it names) spread
 *                     over them, so that posters to one peer do not all contend for one queue
 * @param rings        where the QPs' send queues, doorbell records and CQs live: host memory mapped into the GPU
 *                     (the fallback every NIC has) or the GPU's memory
 */
public record IbgdaConfig(NicChoice nic, NicPlacement placement, Flush flush, int sqWqebbs, int qpsPerPeer,
                          RingPlacement rings) {
    public static final String FLUSH_PROP_NAME = "gda4j.ibgda.flush";
    public static final String FLUSH_ENV = "GDA4J_IBGDA_FLUSH";
    public static final String FLUSH_DEFAULT = "auto";

    public static final String SQ_DEPTH_PROP_NAME = "gda4j.ibgda.sqDepth";
    public static final String SQ_DEPTH_ENV = "GDA4J_IBGDA_SQ_DEPTH";
    public static final String SQ_DEPTH_DEFAULT = "1024";

    public static final String QPS_PER_PEER_PROP_NAME = "gda4j.ibgda.qpsPerPeer";
    public static final String QPS_PER_PEER_ENV = "GDA4J_IBGDA_QPS_PER_PEER";
    public static final String QPS_PER_PEER_DEFAULT = "1";
    public static final String RINGS_PROP_NAME = "gda4j.ibgda.rings";
    public static final String RINGS_ENV = "GDA4J_IBGDA_RINGS";
    public static final String RINGS_DEFAULT = "host";

    /** Most QPs per peer: each is a send queue, a CQ and its rings per ordered pair of ranks. */
    public static final int MAX_QPS_PER_PEER = 32;

    /** The largest send queue in WQEBBs (the WQE index in a ctrl segment is 16 bits). */
    public static final int MAX_SQ_WQEBBS = 1 << 15;

    public static final Setting<String> NIC_DEVICE = Setting.of("RDMA device (and port) per rank",
            NicPlacement.NIC_DEVICE_PROP_NAME, NicPlacement.NIC_DEVICE_ENV, NicPlacement.NIC_DEVICE_DEFAULT,
            "an RDMA device such as mlx5_0 (or mlx5_0:2 for its port 2), one for all local ranks or a comma list with"
                    + " one per local rank; unset means the closest to each GPU", text -> {
                NicPlacement.parse(text, NicPlacement.GDR_LEVEL_DEFAULT); // validates
                return text.strip();
            }).displayedAs(d -> d.isEmpty() ? "auto (closest)" : d);
    public static final Setting<PathType> GDR_LEVEL = Setting.of("farthest GPU-NIC path for GDR",
            NicPlacement.GDR_LEVEL_PROP_NAME, NicPlacement.GDR_LEVEL_ENV, NicPlacement.GDR_LEVEL_DEFAULT,
            "PIX, PXB, PHB, NODE or SYS (nearest first, as nvidia-smi topo -m prints them)",
            text -> PathType.parse(text, NicPlacement.GDR_LEVEL_ENV));
    public static final Setting<Flush> FLUSH = Setting.of("PCIe flush on quiet", FLUSH_PROP_NAME, FLUSH_ENV,
            FLUSH_DEFAULT, "auto (where the NIC's writes may pass their CQE), always or never", Flush::parse)
            .displayedAs(f -> f.name().toLowerCase(Locale.ROOT));
    public static final Setting<Integer> SQ_DEPTH = Setting.of("IBGDA send queue depth (WQEBBs)", SQ_DEPTH_PROP_NAME,
            SQ_DEPTH_ENV, SQ_DEPTH_DEFAULT, "a power of two from 2 to " + MAX_SQ_WQEBBS,
            text -> checkSqWqebbs(Integer.parseInt(text)));

    public static final Setting<Integer> QPS_PER_PEER = Setting.of("IBGDA QPs per peer", QPS_PER_PEER_PROP_NAME,
            QPS_PER_PEER_ENV, QPS_PER_PEER_DEFAULT, "1 to " + MAX_QPS_PER_PEER + " (a warp posts on QP warp % n, or"
                    + " on the channel a kernel names); the same in every process of a job",
            text -> checkQpsPerPeer(Integer.parseInt(text.strip())));

    public static final Setting<RingPlacement> RINGS = Setting.of("IBGDA QP rings (SQ, doorbell record, CQ)",
            RINGS_PROP_NAME, RINGS_ENV, RINGS_DEFAULT, "host (host memory mapped into the GPU) or gpu (the GPU's"
                    + " memory, where the NIC supports it: the emulated NIC does, by copies)", RingPlacement::parse)
            .displayedAs(RingPlacement::word);

    /** Every IBGDA setting, in the order {@code gda4j info} prints them. */
    public static final List<Setting<?>> SETTINGS = List.of(NIC_DEVICE, GDR_LEVEL, FLUSH, SQ_DEPTH, QPS_PER_PEER, RINGS);

    /** When {@code quiet} ends with the PCIe flush (an ATOMIC_FA on a GPU flag via a loopback QP, null-MR SGE). */
    public enum Flush {
        /** Where the NIC says its GPUDirect writes may pass their CQE (mlx5 with relaxed ordering), not elsewhere. */
        AUTO,
        /** Always: also exercises the flush path on the emulated NIC. */
        ALWAYS,
        /** Never: the platform orders GPUDirect writes before CQEs (or the user quiets differently). */
        NEVER;

        static Flush parse(String text) {
            try {
                return valueOf(text.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("unknown flush mode '" + text + "': choose auto, always or never", e);
            }
        }
    }

    /** The rule of {@link Flush} and the discard MR, for {@code gda4j info} (no NIC is opened). */
    public static String describeFlushRule() {
        return "quiet ends with a PCIe flush (a loopback ATOMIC_FA) only after a get, and only where configured"
                + " (auto: the NIC's writes may pass their CQE and the GPU does not order GPUDirect RDMA writes,"
                + " CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING); fetched values nobody reads go to the"
                + " null MR where the flush is on and the NIC has one, else to an 8-byte scratch MR per rank";
    }

    public IbgdaConfig {
        checkSqWqebbs(sqWqebbs);
        checkQpsPerPeer(qpsPerPeer);
        rings = rings == null ? RingPlacement.HOST : rings;
        placement = placement == null ? NicPlacement.defaults() : placement;
    }

    private static int checkSqWqebbs(int sqWqebbs) {
        if (sqWqebbs < 2 || Integer.bitCount(sqWqebbs) != 1 || sqWqebbs > MAX_SQ_WQEBBS) {
            throw new IllegalArgumentException("the send queue depth must be a power of two from 2 to "
                    + MAX_SQ_WQEBBS + " WQEBBs, got " + sqWqebbs);
        }
        return sqWqebbs;
    }

    private static int checkQpsPerPeer(int qps) {
        if (qps < 1 || qps > MAX_QPS_PER_PEER) {
            throw new IllegalArgumentException("QPs per peer must be from 1 to " + MAX_QPS_PER_PEER + ", got " + qps);
        }
        return qps;
    }

    /** @throws SettingException naming the variable or property of the first bad value */
    public static IbgdaConfig resolve(Properties props, Map<String, String> env) {
        return resolve(Settings.of(props, env));
    }

    /** @throws SettingException naming the variable or property of the first bad value */
    public static IbgdaConfig resolve(Settings settings) {
        return new IbgdaConfig(settings.get(NicConfig.NIC),
                NicPlacement.parse(settings.get(NIC_DEVICE), settings.get(GDR_LEVEL).name()),
                settings.get(FLUSH), settings.get(SQ_DEPTH), settings.get(QPS_PER_PEER), settings.get(RINGS));
    }
}
