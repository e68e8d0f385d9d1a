package io.gda4j.nic.mlx5;

import io.gda4j.nic.Nic;
import io.gda4j.nic.NicOptions;
import io.gda4j.nic.NicProvider;
import io.gda4j.verbs.Verbs;
import io.gda4j.verbs.VerbsStatus;

import java.util.Optional;

/**
 * The {@value Nic#MLX5} NIC for {@link java.util.ServiceLoader} ({@code META-INF/services/io.gda4j.nic.NicProvider}).
 * Constructing it loads nothing; {@link #unavailableReason()} asks {@link Verbs#status()}, which never throws.
 */
public final class Mlx5NicProvider implements NicProvider {
    /** {@code --nic auto} tries the real NIC first. */
    public static final int AUTO_PREFERENCE = 0;

    @Override
    public String name() {
        return Nic.MLX5;
    }

    @Override
    public int autoPreference() {
        return AUTO_PREFERENCE;
    }

    /**
     * {@code Verbs.status().sentence()} when rdma-core is absent, lists no device, or lacks libmlx5; empty when a
     * device is listed (opening may still fail, e.g. on a port that is down, and says why).
     */
    @Override
    public Optional<String> unavailableReason() {
        return unavailableReason(Verbs.status());
    }

    static Optional<String> unavailableReason(VerbsStatus status) {
        if (status.kind() != VerbsStatus.Kind.DEVICES_FOUND || !status.mlx5Available()) {
            return Optional.of(status.sentence());
        }
        return Optional.empty();
    }

    /** A ConnectX is a PCIe device: GPUDirect RDMA wants the one behind the GPU's own switch. */
    @Override
    public boolean placedByPciDistance() {
        return true;
    }

    @Override
    public Nic open(NicOptions options) {
        return Mlx5Nic.open(options);
    }
}
