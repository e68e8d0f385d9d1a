package io.gda4j.nic.mlx5;

import io.gda4j.nic.NicException;
import io.gda4j.verbs.Gid;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Which GID of a port a QP's GRH uses (its {@code sgid_index}). On RoCE the GID table holds one entry per IP
 * address of the port's netdev and RoCE version; the usable one for routed RoCE v2 is the RoCE v2 entry of an IPv4
 * address (an IPv4-mapped GID, {@code ::ffff:a.b.c.d}), which is what NCCL and NVSHMEM pick by default (their
 * {@code ib_get_gid_index}: IPv4 family, RoCE version 2, not link-local). On InfiniBand the LID addresses the peer
 * and index 0 (the port GUID) is used.
 *
 * <p>The RoCE version of an entry is not in {@code ibv_query_gid}; it is read, as NCCL does, from
 * {@code /sys/class/infiniband/<device>/ports/<port>/gid_attrs/types/<index>} ("RoCE v2" or "IB/RoCE v1").
 */
final class GidSelection {
    /** The RoCE version of a GID table entry. */
    enum GidType {
        ROCE_V2("RoCE v2"),
        ROCE_V1("RoCE v1"),
        /** The sysfs type could not be read (containers may hide it). */
        UNKNOWN("type unknown");

        private final String label;

        GidType(String label) {
            this.label = label;
        }

        /** The type from the sysfs file's text ("RoCE v2\n", "IB/RoCE v1\n"); UNKNOWN for anything else. */
        static GidType fromSysfs(String text) {
            String t = text == null ? "" : text.strip().toLowerCase(Locale.ROOT);
            if (t.startsWith("roce v2")) {
                return ROCE_V2;
            }
            if (t.startsWith("ib/roce v1") || t.startsWith("roce v1")) {
                return ROCE_V1;
            }
            return UNKNOWN;
        }
    }

    /** One entry of a port's GID table; an empty entry has the zero GID. */
    record GidEntry(int index, Gid gid, GidType type) {
    }

    /** The chosen entry and why, for {@code gda4j info} and error messages. */
    record GidChoice(int index, Gid gid, String reason) {
    }

    private GidSelection() {
    }

    /**
     * Chooses the GID of a RoCE port from its table.
     *
     * @param table      the port's entries (any order; empty entries may be left out or have the zero GID)
     * @param configured a GID index from the settings or options, or {@link Mlx5Settings#GID_AUTO}
     * @param port       "port 1 of mlx5_0", for messages
     * @throws NicException when the configured entry is empty or no entry is usable
     */
    static GidChoice chooseRoce(List<GidEntry> table, int configured, String port) {
        if (configured != Mlx5Settings.GID_AUTO) {
            for (GidEntry e : table) {
                if (e.index() == configured && !e.gid().isZero()) {
                    return new GidChoice(configured, e.gid(), "GID index " + configured + " as configured ("
                            + describe(e) + ")");
                }
            }
            throw new NicException("GID index " + configured + " of " + port + " is empty or does not exist; the"
                    + " usable entries are " + usable(table) + ". Set " + Mlx5Settings.GID_INDEX_PROP_NAME
                    + " to one of them, or to auto.");
        }
        GidEntry best = null;
        int bestRank = Integer.MAX_VALUE;
        for (GidEntry e : table) {
            int rank = rank(e);
            if (rank < bestRank || rank == bestRank && best != null && e.index() < best.index()) {
                best = e;
                bestRank = rank;
            }
        }
        if (best == null || bestRank == UNUSABLE) {
            throw new NicException(port + " is RoCE but its GID table has no usable entry: give its network"
                    + " interface an IP address (ip addr add ... dev <netdev>; show_gids lists the result), or set "
                    + Mlx5Settings.GID_INDEX_PROP_NAME + " to an index.");
        }
        return new GidChoice(best.index(), best.gid(), "GID index " + best.index() + " chosen automatically ("
                + describe(best) + (bestRank == 0 ? "" : "; no RoCE v2 entry with an IPv4 address was found") + ")");
    }

    private static final int UNUSABLE = 99;

    /**
     * Lower is better: 0 RoCE v2 with IPv4, 1 RoCE v2 with a global IPv6, 2 unknown type with IPv4, 3 unknown type
     * with global IPv6, 4 RoCE v1 with an IP, 5 any other non-zero entry (link-local), {@link #UNUSABLE} empty.
     */
    static int rank(GidEntry e) {
        Gid g = e.gid();
        if (g.isZero()) {
            return UNUSABLE;
        }
        boolean ipv4 = isIpv4Mapped(g);
        boolean global = ipv4 || !isLinkLocal(g);
        return switch (e.type()) {
            case ROCE_V2 -> ipv4 ? 0 : global ? 1 : 5;
            case UNKNOWN -> ipv4 ? 2 : global ? 3 : 5;
            case ROCE_V1 -> global ? 4 : 5;
        };
    }

    /** {@code ::ffff:a.b.c.d}: bytes 0..9 zero, bytes 10 and 11 0xff. */
    static boolean isIpv4Mapped(Gid gid) {
        byte[] raw = gid.raw();
        for (int i = 0; i < 10; i++) {
            if (raw[i] != 0) {
                return false;
            }
        }
        return raw[10] == (byte) 0xff && raw[11] == (byte) 0xff;
    }

    /** {@code fe80::/64}, the prefix a link-local IPv6 address (and the default RoCE GID) has. */
    static boolean isLinkLocal(Gid gid) {
        byte[] raw = gid.raw();
        if (raw[0] != (byte) 0xfe || raw[1] != (byte) 0x80) {
            return false;
        }
        for (int i = 2; i < 8; i++) {
            if (raw[i] != 0) {
                return false;
            }
        }
        return true;
    }

    /** "RoCE v2, IPv4 10.0.0.1" or "RoCE v1, fe80:0000:...". */
    static String describe(GidEntry e) {
        Gid g = e.gid();
        if (isIpv4Mapped(g)) {
            byte[] raw = g.raw();
            return String.format("%s, IPv4 %d.%d.%d.%d", e.type().label, raw[12] & 0xff, raw[13] & 0xff,
                    raw[14] & 0xff, raw[15] & 0xff);
        }
        return e.type().label + ", " + g;
    }

    private static String usable(List<GidEntry> table) {
        StringBuilder text = new StringBuilder();
        for (GidEntry e : table) {
            if (!e.gid().isZero()) {
                text.append(text.length() == 0 ? "" : "; ").append(e.index()).append(" (").append(describe(e))
                        .append(')');
            }
        }
        return text.length() == 0 ? "none" : text.toString();
    }

    /** The RoCE version of entry {@code index} as sysfs reports it; UNKNOWN when the file cannot be read. */
    static GidType sysfsType(Path sysfsRoot, String device, int port, int index) {
        Path file = sysfsRoot.resolve(Path.of(device, "ports", Integer.toString(port), "gid_attrs", "types",
                Integer.toString(index)));
        try {
            return GidType.fromSysfs(Files.readString(file, StandardCharsets.US_ASCII));
        } catch (IOException | RuntimeException e) {
            return GidType.UNKNOWN; // empty entries read as EINVAL; containers may hide the file
        }
    }

    /** Where the kernel lists RDMA devices. */
    static final Path SYSFS_INFINIBAND = Path.of("/sys/class/infiniband");
}
