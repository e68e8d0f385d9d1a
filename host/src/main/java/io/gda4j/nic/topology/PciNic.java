package io.gda4j.nic.topology;

import java.util.List;

/**
 * An RDMA device ({@code /sys/class/infiniband/<name>}) and the PCI function it is.
 *
 * @param name   e.g. {@code mlx5_0}
 * @param device its PCI function
 * @param ports  its ports, by number
 */
public record PciNic(String name, PciDevice device, List<NicPort> ports) {
    public PciNic {
        ports = List.copyOf(ports);
    }
}
