package io.gda4j.ibgda;

import io.gda4j.config.Setting;
import io.gda4j.config.SettingException;
import io.gda4j.nic.NicChoice;

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
 * @param nicDevice    RDMA device for mlx5 (empty: the first one)
 * @param flush        when quiet ends with the PCIe flush through the null MR
 * @param sqWqebbs     send queue depth of every QP in WQEBBs (a power of two)
 */
public record IbgdaConfig(NicChoice nic, String nicDevice, Flush flush, int sqWqebbs) {
    public static final String NIC_PROP_NAME = "gda4j.nic";
    public static final String NIC_ENV = "GDA4J_NIC";
    public static final String NIC_DEFAULT = "auto";

    public static final String NIC_DEVICE_PROP_NAME = "gda4j.nic.device";
    public static final String NIC_DEVICE_ENV = "GDA4J_NIC_DEVICE";
    public static final String NIC_DEVICE_DEFAULT = "";

    public static final String FLUSH_PROP_NAME = "gda4j.ibgda.flush";
    public static final String FLUSH_ENV = "GDA4J_IBGDA_FLUSH";
    public static final String FLUSH_DEFAULT = "auto";

    public static final String SQ_DEPTH_PROP_NAME = "gda4j.ibgda.sqDepth";
    public static final String SQ_DEPTH_ENV = "GDA4J_IBGDA_SQ_DEPTH";
    public static final String SQ_DEPTH_DEFAULT = "1024";

    /** The largest send queue in WQEBBs (the WQE index in a ctrl segment is 16 bits). */
    public static final int MAX_SQ_WQEBBS = 1 << 15;

    public static final Setting<NicChoice> NIC = Setting.of("IBGDA NIC", NIC_PROP_NAME, NIC_ENV, NIC_DEFAULT,
            "auto (mlx5 if an RDMA device exists, else emulated), mlx5 or emulated", NicChoice::parse)
            .displayedAs(NicChoice::word).withNote("--nic overrides it");
    public static final Setting<String> NIC_DEVICE = Setting.of("RDMA device for mlx5", NIC_DEVICE_PROP_NAME,
            NIC_DEVICE_ENV, NIC_DEVICE_DEFAULT, "an RDMA device name such as mlx5_0 (ibv_devices lists them); unset "
                    + "means the first", text -> text).displayedAs(d -> d.isEmpty() ? "first" : d);
    public static final Setting<Flush> FLUSH = Setting.of("PCIe flush on quiet", FLUSH_PROP_NAME, FLUSH_ENV,
            FLUSH_DEFAULT, "auto (where the NIC's writes may pass their CQE), always or never", Flush::parse)
            .displayedAs(f -> f.name().toLowerCase(Locale.ROOT));
    public static final Setting<Integer> SQ_DEPTH = Setting.of("IBGDA send queue depth (WQEBBs)", SQ_DEPTH_PROP_NAME,
            SQ_DEPTH_ENV, SQ_DEPTH_DEFAULT, "a power of two from 2 to " + MAX_SQ_WQEBBS,
            text -> checkSqWqebbs(Integer.parseInt(text)));

    /** Every IBGDA setting, in the order {@code gda4j info} prints them. */
    public static final List<Setting<?>> SETTINGS = List.of(NIC, NIC_DEVICE, FLUSH, SQ_DEPTH);

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

    public IbgdaConfig {
        checkSqWqebbs(sqWqebbs);
        nicDevice = nicDevice == null ? "" : nicDevice.trim();
    }

    private static int checkSqWqebbs(int sqWqebbs) {
        if (sqWqebbs < 2 || Integer.bitCount(sqWqebbs) != 1 || sqWqebbs > MAX_SQ_WQEBBS) {
            throw new IllegalArgumentException("the send queue depth must be a power of two from 2 to "
                    + MAX_SQ_WQEBBS + " WQEBBs, got " + sqWqebbs);
        }
        return sqWqebbs;
    }

    public static IbgdaConfig resolve() {
        return resolve(System.getProperties(), System.getenv());
    }

    /** @throws SettingException naming the variable or property of the first bad value */
    public static IbgdaConfig resolve(Properties props, Map<String, String> env) {
        return new IbgdaConfig(NIC.resolve(props, env), NIC_DEVICE.resolve(props, env), FLUSH.resolve(props, env),
                SQ_DEPTH.resolve(props, env));
    }
}
