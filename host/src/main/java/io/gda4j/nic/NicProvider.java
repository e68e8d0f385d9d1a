package io.gda4j.nic;

import java.util.Optional;

/**
 * A kind of NIC ({@value Nic#MLX5}, {@value Nic#EMULATED}), found through {@link java.util.ServiceLoader}:
 * register an implementation in {@code META-INF/services/io.gda4j.nic.NicProvider}.
 */
public interface NicProvider {
    /** {@link Nic#name()} of the NICs it opens. */
    String name();

    /** Lower is tried first by {@code --nic auto}: mlx5 0, emulated 100. */
    int autoPreference();

    /**
     * Why no NIC of this kind can be opened here (for mlx5: {@code Verbs.status().sentence()} when no device is
     * found), or empty when {@link #open} should work. Never throws; cheap enough for {@code gda4j info}.
     */
    Optional<String> unavailableReason();

    /**
     * True for a device on the PCIe tree (mlx5): each GPU then opens the NIC port closest to it
     * ({@code io.gda4j.nic.topology.NicAffinity}); false for one NIC all GPUs share (the emulated NIC).
     */
    default boolean placedByPciDistance() {
        return false;
    }

    /**
     * For a provider not placed by PCIe distance: true when each GPU gets a NIC of its own, with its own keys (the
     * strict emulated NIC, as on a machine with a ConnectX per GPU), false for one NIC every GPU shares.
     */
    default boolean oneNicPerGpu() {
        return false;
    }

    /** Opens a NIC; throws {@link NicException} with the reason on failure. */
    Nic open(NicOptions options);
}
