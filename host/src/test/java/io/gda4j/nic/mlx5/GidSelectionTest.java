package io.gda4j.nic.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.nic.NicException;
import io.gda4j.nic.mlx5.GidSelection.GidChoice;
import io.gda4j.nic.mlx5.GidSelection.GidEntry;
import io.gda4j.nic.mlx5.GidSelection.GidType;
import io.gda4j.verbs.Gid;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** RoCE GID choice on synthetic tables shaped like show_gids output. */
class GidSelectionTest {
    static final String PORT = "port 1 of mlx5_0";
    static final Gid LINK_LOCAL = gid("fe800000000000000e42a1fffe9a1b2c");
    static final Gid IPV4 = gid("00000000000000000000ffff0a000001");       // ::ffff:10.0.0.1
    static final Gid IPV6 = gid("20010db8000000000000000000000042");        // 2001:db8::42

    static Gid gid(String hex) {
        return Gid.of(HexFormat.of().parseHex(hex));
    }

    /** The usual table of a ConnectX port with one IPv4 and one IPv6 address: v1 and v2 entry of each. */
    static List<GidEntry> typicalTable() {
        return List.of(new GidEntry(0, LINK_LOCAL, GidType.ROCE_V1), new GidEntry(1, LINK_LOCAL, GidType.ROCE_V2),
                new GidEntry(2, IPV4, GidType.ROCE_V1), new GidEntry(3, IPV4, GidType.ROCE_V2),
                new GidEntry(4, IPV6, GidType.ROCE_V1), new GidEntry(5, IPV6, GidType.ROCE_V2));
    }

    @Test
    void prefersTheRoceV2EntryOfAnIpv4Address() {
        GidChoice c = GidSelection.chooseRoce(typicalTable(), Mlx5Settings.GID_AUTO, PORT);
        assertEquals(3, c.index());
        assertEquals(IPV4, c.gid());
        assertEquals("GID index 3 chosen automatically (RoCE v2, IPv4 10.0.0.1)", c.reason());
    }

    @Test
    void fallsBackToRoceV2Ipv6ThenSaysSo() {
        List<GidEntry> noIpv4 = List.of(new GidEntry(0, LINK_LOCAL, GidType.ROCE_V1),
                new GidEntry(1, LINK_LOCAL, GidType.ROCE_V2), new GidEntry(4, IPV6, GidType.ROCE_V1),
                new GidEntry(5, IPV6, GidType.ROCE_V2));
        GidChoice c = GidSelection.chooseRoce(noIpv4, Mlx5Settings.GID_AUTO, PORT);
        assertEquals(5, c.index());
        assertTrue(c.reason().contains("no RoCE v2 entry with an IPv4 address"), c.reason());
    }

    @Test
    void unknownTypesStillPreferIpv4AndLowIndexesWinTies() {
        List<GidEntry> hidden = List.of(new GidEntry(0, LINK_LOCAL, GidType.UNKNOWN),
                new GidEntry(7, IPV4, GidType.UNKNOWN), new GidEntry(6, IPV4, GidType.UNKNOWN));
        assertEquals(6, GidSelection.chooseRoce(hidden, Mlx5Settings.GID_AUTO, PORT).index());
        List<GidEntry> onlyLinkLocal = List.of(new GidEntry(1, LINK_LOCAL, GidType.ROCE_V2));
        assertEquals(1, GidSelection.chooseRoce(onlyLinkLocal, Mlx5Settings.GID_AUTO, PORT).index());
    }

    @Test
    void aConfiguredIndexWinsEvenOverABetterOne() {
        GidChoice c = GidSelection.chooseRoce(typicalTable(), 2, PORT);
        assertEquals(2, c.index());
        assertEquals("GID index 2 as configured (RoCE v1, IPv4 10.0.0.1)", c.reason());
    }

    @Test
    void anEmptyConfiguredIndexListsTheUsableOnes() {
        NicException e = assertThrows(NicException.class,
                () -> GidSelection.chooseRoce(typicalTable(), 9, PORT));
        assertTrue(e.getMessage().startsWith("GID index 9 of port 1 of mlx5_0 is empty or does not exist; the usable"
                + " entries are 0 (RoCE v1, fe80:"), e.getMessage());
        assertTrue(e.getMessage().contains("3 (RoCE v2, IPv4 10.0.0.1)"), e.getMessage());
        assertTrue(e.getMessage().endsWith("Set gda4j.mlx5.gidIndex to one of them, or to auto."), e.getMessage());
    }

    @Test
    void aRocePortWithoutAddressesCannotBeUsed() {
        NicException e = assertThrows(NicException.class, () -> GidSelection.chooseRoce(
                List.of(new GidEntry(0, Gid.zero(), GidType.UNKNOWN)), Mlx5Settings.GID_AUTO, PORT));
        assertTrue(e.getMessage().startsWith("port 1 of mlx5_0 is RoCE but its GID table has no usable entry"),
                e.getMessage());
        assertThrows(NicException.class, () -> GidSelection.chooseRoce(List.of(), Mlx5Settings.GID_AUTO, PORT));
    }

    @Test
    void classifiesAddresses() {
        assertTrue(GidSelection.isIpv4Mapped(IPV4));
        assertFalse(GidSelection.isIpv4Mapped(IPV6));
        assertFalse(GidSelection.isIpv4Mapped(gid("00000000000000000000fffe0a000001")));
        assertTrue(GidSelection.isLinkLocal(LINK_LOCAL));
        assertFalse(GidSelection.isLinkLocal(IPV6));
        assertFalse(GidSelection.isLinkLocal(gid("fe800001000000000e42a1fffe9a1b2c")));
        assertEquals(0, GidSelection.rank(new GidEntry(3, IPV4, GidType.ROCE_V2)));
        assertEquals(4, GidSelection.rank(new GidEntry(2, IPV4, GidType.ROCE_V1)));
        assertEquals(5, GidSelection.rank(new GidEntry(1, LINK_LOCAL, GidType.ROCE_V2)));
    }

    @Test
    void readsTheRoceVersionFromSysfsAsTheKernelWritesIt(@TempDir Path sysfs) throws IOException {
        Path types = sysfs.resolve("mlx5_0/ports/1/gid_attrs/types");
        Files.createDirectories(types);
        Files.writeString(types.resolve("0"), "IB/RoCE v1\n");
        Files.writeString(types.resolve("1"), "RoCE v2\n");
        assertEquals(GidType.ROCE_V1, GidSelection.sysfsType(sysfs, "mlx5_0", 1, 0));
        assertEquals(GidType.ROCE_V2, GidSelection.sysfsType(sysfs, "mlx5_0", 1, 1));
        assertEquals(GidType.UNKNOWN, GidSelection.sysfsType(sysfs, "mlx5_0", 1, 2), "a missing file");
        assertEquals(GidType.UNKNOWN, GidType.fromSysfs(""));
    }
}
