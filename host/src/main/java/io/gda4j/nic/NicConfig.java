package io.gda4j.nic;

import io.gda4j.config.Setting;
import io.gda4j.config.Settings;

import java.util.List;

/**
 * The NIC choice every transport that posts on a NIC shares (ibgda, the proxy's verbs handler): a system property
 * ({@value #NIC_PROP_NAME}), an environment variable ({@value #NIC_ENV}) and a default; {@code gda4j info} prints
 * {@link #SETTINGS}. A world carries it in its settings ({@code io.gda4j.config.Settings}), which is how
 * {@code --nic} reaches the transports.
 */
public final class NicConfig {
    public static final String NIC_PROP_NAME = "gda4j.nic";
    public static final String NIC_ENV = "GDA4J_NIC";
    public static final String NIC_DEFAULT = "auto";

    public static final Setting<NicChoice> NIC = Setting.of("NIC", NIC_PROP_NAME, NIC_ENV, NIC_DEFAULT,
            "auto (mlx5 if an RDMA device exists, else emulated), mlx5 or emulated", NicChoice::parse)
            .displayedAs(NicChoice::word).withNote("--nic overrides it");

    /** Every NIC setting, in the order {@code gda4j info} prints them. */
    public static final List<Setting<?>> SETTINGS = List.of(NIC);

    private NicConfig() {
    }

    /** The NIC {@link #NIC} picks with {@code settings}, or why none (a bad value included); never throws. */
    public static NicSelection selection(Settings settings) {
        try {
            return Nics.select(settings.get(NIC));
        } catch (RuntimeException e) {
            return new NicSelection(null, "bad NIC configuration: " + e.getMessage());
        }
    }
}
