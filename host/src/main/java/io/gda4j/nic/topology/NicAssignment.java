package io.gda4j.nic.topology;

import io.gda4j.nic.NicOptions;

/**
 * The NIC port one local rank's GPU uses, and why.
 *
 * @param gpuBusId the GPU, as sysfs spells its bus id
 * @param port     the port; null when the machine shows no RDMA device in sysfs (then the first device
 *                 libibverbs lists is opened, as before NIC choice existed)
 * @param path     how far the port's device is from the GPU; null when sysfs does not show one of them
 * @param reason   one sentence: how this port was chosen
 */
public record NicAssignment(String gpuBusId, NicPort port, PathType path, String reason) {
    /** What to open: this device and port, GID chosen by the NIC. */
    public NicOptions options() {
        return port == null ? NicOptions.defaults() : new NicOptions(port.device(), port.number(), 0);
    }

    /** "mlx5_0 port 1 (PIX)", or "the first RDMA device" when sysfs named none. */
    public String label() {
        return (port == null ? "the first RDMA device" : port.label()) + (path == null ? "" : " (" + path + ")");
    }
}
