package io.gda4j.nic.topology;

import java.util.Locale;

/**
 * How far a NIC is from a GPU on the PCIe tree, nearest first, in the words of {@code nvidia-smi topo -m} (and of
 * NCCL's path types and {@code NCCL_NET_GDR_LEVEL}). GPUDirect RDMA is fast up to {@link #PXB}; through the CPU's
 * host bridge it is slow or refused by the root complex, and across sockets it is refused on most platforms.
 */
public enum PathType {
    /** At most one PCIe switch between them (or one bridge). */
    PIX("at most one PCIe switch"),
    /** Several PCIe switches, without the CPU's host bridge. */
    PXB("several PCIe switches, not the host bridge"),
    /** Through a PCIe host bridge (the CPU's root complex). */
    PHB("through the CPU's PCIe host bridge"),
    /** Between two host bridges of one NUMA node. */
    NODE("between PCIe host bridges of one NUMA node"),
    /** Across the interconnect between NUMA nodes (sockets: UPI, Infinity Fabric). */
    SYS("across the interconnect between CPU sockets");

    private final String meaning;

    PathType(String meaning) {
        this.meaning = meaning;
    }

    /** What the path crosses, e.g. "through the CPU's PCIe host bridge". */
    public String meaning() {
        return meaning;
    }

    /** True when this path is no farther than {@code limit}. */
    public boolean within(PathType limit) {
        return compareTo(limit) <= 0;
    }

    /** Parses {@code PIX|PXB|PHB|NODE|SYS} (any case); {@code settingName} names the setting in the error. */
    public static PathType parse(String text, String settingName) {
        for (PathType t : values()) {
            if (t.name().equalsIgnoreCase(text.strip())) {
                return t;
            }
        }
        throw new IllegalArgumentException(settingName + " must be one of PIX, PXB, PHB, NODE, SYS (nearest first,"
                + " as nvidia-smi topo -m prints them), not '" + text + "'");
    }

    /** "PIX" etc. followed by the meaning, one per line, for the legend under a matrix. */
    public static String legend() {
        StringBuilder b = new StringBuilder();
        for (PathType t : values()) {
            b.append(String.format(Locale.ROOT, "%-4s = %s%n", t.name(), t.meaning));
        }
        return b.toString();
    }
}
