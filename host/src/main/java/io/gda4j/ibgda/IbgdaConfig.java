package io.gda4j.ibgda;

import io.gda4j.nic.NicChoice;
import io.gda4j.nic.topology.NicPlacement;

import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;

/**
 * Settings of the IBGDA transport, each with a system property ({@code *_PROP_NAME}), an environment variable
 * ({@code *_ENV}) and a default ({@code *_DEFAULT}); a property beats the environment, which beats the default.
 * Resolved once per world by {@link IbgdaTransport}; {@code gda4j info} prints {@link #describe()}.
 *
 * @param nic          which NIC: auto (mlx5 if a device exists, else emulated), mlx5 or emulated
 * @param placement    which RDMA device (and port) each local rank uses, and how far from its GPU it may be
 *                     ({@link NicPlacement}: {@code GDA4J_NIC_DEVICE}, {@code GDA4J_NIC_GDR_LEVEL})
 * @param flush        when quiet ends with the PCIe flush through the null MR
 * @param sqWqebbs     send queue depth of every QP in WQEBBs (a power of two)
 */
public record IbgdaConfig(NicChoice nic, NicPlacement placement, Flush flush, int sqWqebbs) {
    public static final String NIC_PROP_NAME = "gda4j.nic";
    public static final String NIC_ENV = "GDA4J_NIC";
    public static final String NIC_DEFAULT = "auto";

    public static final String FLUSH_PROP_NAME = "gda4j.ibgda.flush";
    public static final String FLUSH_ENV = "GDA4J_IBGDA_FLUSH";
    public static final String FLUSH_DEFAULT = "auto";

    public static final String SQ_DEPTH_PROP_NAME = "gda4j.ibgda.sqDepth";
    public static final String SQ_DEPTH_ENV = "GDA4J_IBGDA_SQ_DEPTH";
    public static final String SQ_DEPTH_DEFAULT = "1024";

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
                throw new IllegalArgumentException(FLUSH_ENV + "/" + FLUSH_PROP_NAME + " must be auto, always or"
                        + " never, got '" + text + "'", e);
            }
        }
    }

    public IbgdaConfig {
        if (sqWqebbs < 2 || Integer.bitCount(sqWqebbs) != 1 || sqWqebbs > (1 << 15)) {
            throw new IllegalArgumentException(SQ_DEPTH_ENV + "/" + SQ_DEPTH_PROP_NAME + " must be a power of two"
                    + " from 2 to 32768 WQEBBs, got " + sqWqebbs);
        }
        placement = placement == null ? NicPlacement.defaults() : placement;
    }

    public static IbgdaConfig resolve() {
        return resolve(System.getProperties(), System.getenv());
    }

    public static IbgdaConfig resolve(Properties props, Map<String, String> env) {
        String depth = setting(props, env, SQ_DEPTH_PROP_NAME, SQ_DEPTH_ENV, SQ_DEPTH_DEFAULT);
        int sq;
        try {
            sq = Integer.parseInt(depth.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(SQ_DEPTH_ENV + "/" + SQ_DEPTH_PROP_NAME + " must be a whole number,"
                    + " got '" + depth + "'", e);
        }
        return new IbgdaConfig(NicChoice.parse(setting(props, env, NIC_PROP_NAME, NIC_ENV, NIC_DEFAULT)),
                NicPlacement.parse(setting(props, env, NicPlacement.NIC_DEVICE_PROP_NAME, NicPlacement.NIC_DEVICE_ENV,
                                NicPlacement.NIC_DEVICE_DEFAULT),
                        setting(props, env, NicPlacement.GDR_LEVEL_PROP_NAME, NicPlacement.GDR_LEVEL_ENV,
                                NicPlacement.GDR_LEVEL_DEFAULT)),
                Flush.parse(setting(props, env, FLUSH_PROP_NAME, FLUSH_ENV, FLUSH_DEFAULT)), sq);
    }

    private static String setting(Properties props, Map<String, String> env, String prop, String envName, String def) {
        String v = props.getProperty(prop);
        if (v == null) {
            v = env.get(envName);
        }
        return v == null ? def : v;
    }

    /** One line per setting with where to change it, for {@code gda4j info}. */
    public String describe() {
        return String.format("ibgda nic         %s  (%s / -D%s; auto = mlx5 if a device exists, else emulated)%n",
                nic.word(), NIC_ENV, NIC_PROP_NAME)
                + placement.describe().lines().map(line -> "ibgda " + line + System.lineSeparator())
                .collect(Collectors.joining())
                + String.format("ibgda flush       %s  (%s / -D%s; auto = where the NIC's writes may pass their CQE)%n",
                flush.name().toLowerCase(Locale.ROOT), FLUSH_ENV, FLUSH_PROP_NAME)
                + String.format("ibgda sq depth    %d WQEBBs  (%s / -D%s)%n", sqWqebbs, SQ_DEPTH_ENV,
                SQ_DEPTH_PROP_NAME);
    }
}
