package io.gda4j.nic.topology;

import java.util.List;

/**
 * One PCI function as sysfs shows it: where it hangs in the tree and what it is.
 *
 * @param busId      {@code domain:bus:device.function}, lower case, e.g. {@code 0000:19:00.0}
 * @param hostBridge the root complex it is under, e.g. {@code pci0000:17}; empty when the path shows none
 * @param bridges    the PCI bridges between the host bridge and the function, top first (root port, then each
 *                   switch's upstream and downstream ports)
 * @param numaNode   the NUMA node sysfs gives, -1 when unknown (single-socket machines often say -1)
 * @param classCode  the 24-bit class code, e.g. {@code 0x030200} (3D controller), {@code 0x020700} (InfiniBand)
 * @param vendorId   e.g. {@code 0x10de} (NVIDIA), {@code 0x15b3} (Mellanox)
 */
public record PciDevice(String busId, String hostBridge, List<String> bridges, int numaNode, int classCode,
                        int vendorId) {
    public static final int VENDOR_NVIDIA = 0x10de;
    /** Base class of display controllers (VGA 0x0300, 3D 0x0302): what a GPU reports. */
    public static final int CLASS_DISPLAY = 0x03;

    public PciDevice {
        bridges = List.copyOf(bridges);
    }

    /** An NVIDIA display or 3D controller. */
    public boolean isNvidiaGpu() {
        return vendorId == VENDOR_NVIDIA && classCode >> 16 == CLASS_DISPLAY;
    }

    /**
     * The path between two functions ({@code nvidia-smi topo -m} rules): different host bridges are NODE within one
     * NUMA node and SYS across nodes; under one host bridge it is PHB when they share no bridge, PIX when each is at
     * most one bridge below their deepest shared bridge (one switch: its downstream port, then its upstream port),
     * and PXB when deeper (switches behind switches).
     */
    public PathType pathTo(PciDevice other) {
        if (hostBridge.isEmpty() || !hostBridge.equals(other.hostBridge)) {
            return sameNumaNode(other) ? PathType.NODE : PathType.SYS;
        }
        int shared = 0;
        while (shared < bridges.size() && shared < other.bridges.size()
                && bridges.get(shared).equals(other.bridges.get(shared))) {
            shared++;
        }
        if (shared == 0) {
            return PathType.PHB;
        }
        int below = Math.max(bridges.size() - shared, other.bridges.size() - shared);
        return below <= 1 ? PathType.PIX : PathType.PXB;
    }

    /** Unknown on both sides counts as one node (what single-socket machines report); unknown on one as another. */
    private boolean sameNumaNode(PciDevice other) {
        return numaNode == other.numaNode;
    }
}
