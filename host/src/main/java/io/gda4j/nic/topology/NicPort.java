package io.gda4j.nic.topology;

import java.util.Locale;

/**
 * One port of an RDMA device, from {@code /sys/class/infiniband/<device>/ports/<number>}.
 *
 * @param device    the RDMA device, e.g. {@code mlx5_0}
 * @param number    the port number, from 1
 * @param linkLayer {@code InfiniBand} or {@code Ethernet} (RoCE); empty when sysfs does not say
 * @param state     the port state as sysfs writes it, e.g. {@code 4: ACTIVE}; empty when sysfs does not say
 */
public record NicPort(String device, int number, String linkLayer, String state) {
    /** True unless sysfs says the port is in a state other than ACTIVE (an unreadable state counts as usable). */
    public boolean active() {
        return state.isEmpty() || state.toUpperCase(Locale.ROOT).endsWith("ACTIVE");
    }

    /** "mlx5_0 port 1". */
    public String label() {
        return device + " port " + number;
    }

    @Override
    public String toString() {
        return label();
    }
}
