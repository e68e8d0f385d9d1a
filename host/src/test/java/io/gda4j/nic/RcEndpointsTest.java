package io.gda4j.nic;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.verbs.Gid;
import io.gda4j.verbs.VerbsConstants;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * The RC endpoints an offer carries ({@link RcEndpointsDescriptor}): each field at its documented offset, a round
 * trip, and the refusal of every malformed table with the sender's name and what is wrong.
 */
class RcEndpointsTest {
    /** A RoCE GID: ::ffff:10.0.0.7, as a port reports it. */
    static final byte[] ROCE_GID = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff, 10, 0, 0, 7};
    static final QpAddress ROCE = new QpAddress("mlx5_3", 1, VerbsConstants.IBV_LINK_LAYER_ETHERNET, 0xabcdef,
            0x123456, 0, Gid.of(ROCE_GID), VerbsConstants.IBV_MTU_4096);
    static final QpAddress INFINIBAND = new QpAddress("mlx5_bond_10", 2, VerbsConstants.IBV_LINK_LAYER_INFINIBAND,
            0x000017, 0xfffffe, 0x1c2d, null, VerbsConstants.IBV_MTU_2048);
    static final RcEndpoints TABLE = new RcEndpoints(Map.of(5, INFINIBAND, 0, ROCE));

    @Test
    void everyFieldLiesAtItsDocumentedOffset() {
        byte[] bytes = TABLE.encode();
        ByteBuffer b = ByteBuffer.wrap(bytes);
        assertEquals(RcEndpointsDescriptor.MAGIC, b.getInt(RcEndpointsDescriptor.MAGIC_OFFSET));
        assertEquals("GDRC", new String(bytes, 0, 4, StandardCharsets.US_ASCII));
        assertEquals(RcEndpointsDescriptor.VERSION, b.getShort(RcEndpointsDescriptor.VERSION_OFFSET));
        assertEquals(2, b.getShort(RcEndpointsDescriptor.COUNT_OFFSET));
        // Entries in rank order: rank 0 first.
        int e = RcEndpointsDescriptor.ENTRIES_OFFSET;
        assertEquals(0, b.getInt(e + RcEndpointsDescriptor.RANK_OFFSET));
        assertEquals(0xabcdef, b.getInt(e + RcEndpointsDescriptor.QPN_OFFSET));
        assertEquals(0x123456, b.getInt(e + RcEndpointsDescriptor.PSN_OFFSET));
        assertEquals(0, b.getShort(e + RcEndpointsDescriptor.LID_OFFSET));
        assertEquals(1, b.get(e + RcEndpointsDescriptor.PORT_OFFSET));
        assertEquals(VerbsConstants.IBV_LINK_LAYER_ETHERNET, b.get(e + RcEndpointsDescriptor.LINK_LAYER_OFFSET));
        assertEquals(VerbsConstants.IBV_MTU_4096, b.get(e + RcEndpointsDescriptor.PATH_MTU_OFFSET));
        assertEquals(6, b.get(e + RcEndpointsDescriptor.DEVICE_BYTES_OFFSET));
        assertArrayEquals(ROCE_GID, Arrays.copyOfRange(bytes, e + RcEndpointsDescriptor.GID_OFFSET,
                e + RcEndpointsDescriptor.GID_OFFSET + 16), "the GID in network order, as the port reports it");
        assertEquals("mlx5_3", new String(bytes, e + RcEndpointsDescriptor.DEVICE_OFFSET, 6, StandardCharsets.UTF_8));
        e += RcEndpointsDescriptor.ENTRY_FIXED_BYTES + 6;
        assertEquals(5, b.getInt(e + RcEndpointsDescriptor.RANK_OFFSET));
        assertEquals(0x17, b.getInt(e + RcEndpointsDescriptor.QPN_OFFSET));
        assertEquals(0xfffffe, b.getInt(e + RcEndpointsDescriptor.PSN_OFFSET));
        assertEquals(0x1c2d, b.getShort(e + RcEndpointsDescriptor.LID_OFFSET));
        assertEquals(2, b.get(e + RcEndpointsDescriptor.PORT_OFFSET));
        assertEquals(VerbsConstants.IBV_LINK_LAYER_INFINIBAND, b.get(e + RcEndpointsDescriptor.LINK_LAYER_OFFSET));
        assertArrayEquals(new byte[16], Arrays.copyOfRange(bytes, e + RcEndpointsDescriptor.GID_OFFSET,
                e + RcEndpointsDescriptor.GID_OFFSET + 16), "no GRH on InfiniBand: a zero GID");
        assertEquals(e + RcEndpointsDescriptor.ENTRY_FIXED_BYTES + "mlx5_bond_10".length(), bytes.length);
        assertEquals(bytes.length, TABLE.encodedBytes());
    }

    @Test
    void aTableRoundTripsAndSaysWhichEndpointIsForWhichRank() {
        RcEndpoints back = RcEndpoints.decode("rank 2", TABLE.encode());
        assertEquals(TABLE, back);
        assertEquals(ROCE, back.forRank(0).orElseThrow());
        assertEquals(INFINIBAND, back.forRank(5).orElseThrow());
        assertTrue(back.forRank(1).isEmpty());
        assertArrayEquals(TABLE.encode(), back.encode());
        assertEquals(RcEndpoints.NONE, RcEndpoints.decode("rank 2", RcEndpoints.NONE.encode()));
        assertEquals(RcEndpointsDescriptor.ENTRIES_OFFSET, RcEndpoints.NONE.encode().length);
        // The emulated NIC's address (no port facts) travels too: port 1, link layer and MTU unstated.
        QpAddress emulated = new QpAddress("emulated#4", 0x21, 0, null, 0x21);
        assertEquals(emulated, RcEndpoints.decode("r", new RcEndpoints(Map.of(1, emulated)).encode()).forRank(1)
                .orElseThrow());
    }

    @Test
    void malformedTablesAreRefusedNamingTheirSender() {
        byte[] good = TABLE.encode();
        int e = RcEndpointsDescriptor.ENTRIES_OFFSET;
        byte[] magic = good.clone();
        magic[0] ^= 1;
        assertRefused(magic, "published no RC endpoints of version 1", "same gda4j version");
        byte[] version = good.clone();
        version[RcEndpointsDescriptor.VERSION_OFFSET + 1]++;
        assertRefused(version, "version 2");
        assertRefused(Arrays.copyOf(good, good.length - 1), "cut short");
        assertRefused(Arrays.copyOf(good, 5), "cut short");
        assertRefused(Arrays.copyOf(good, good.length + 2), "2 bytes after the last entry");
        byte[] more = good.clone();
        ByteBuffer.wrap(more).putShort(RcEndpointsDescriptor.COUNT_OFFSET, (short) 3);
        assertRefused(more, "cut short");
        byte[] qpn = good.clone();
        ByteBuffer.wrap(qpn).putInt(e + RcEndpointsDescriptor.QPN_OFFSET, 0x1abcdef);
        assertRefused(qpn, "endpoint for rank 0 is malformed", "QPN 0x1abcdef");
        byte[] psn = good.clone();
        ByteBuffer.wrap(psn).putInt(e + RcEndpointsDescriptor.PSN_OFFSET, -1);
        assertRefused(psn, "endpoint for rank 0 is malformed", "24-bit");
        byte[] port = good.clone();
        port[e + RcEndpointsDescriptor.PORT_OFFSET] = 0;
        assertRefused(port, "ports are numbered 1 to 255, not 0");
        byte[] link = good.clone();
        link[e + RcEndpointsDescriptor.LINK_LAYER_OFFSET] = 7;
        assertRefused(link, "link layer 7");
        byte[] mtu = good.clone();
        mtu[e + RcEndpointsDescriptor.PATH_MTU_OFFSET] = 6;
        assertRefused(mtu, "path MTU 6 is no IBV_MTU_*");
        byte[] name = good.clone();
        name[e + RcEndpointsDescriptor.DEVICE_BYTES_OFFSET] = (byte) (RcEndpointsDescriptor.MAX_DEVICE_BYTES + 1);
        assertRefused(name, "a NIC name of 65 bytes");
        byte[] negative = good.clone();
        ByteBuffer.wrap(negative).putInt(e + RcEndpointsDescriptor.RANK_OFFSET, -3);
        assertRefused(negative, "an RC endpoint for rank -3");
        byte[] twice = good.clone();
        int second = e + RcEndpointsDescriptor.ENTRY_FIXED_BYTES + 6;
        ByteBuffer.wrap(twice).putInt(second + RcEndpointsDescriptor.RANK_OFFSET, 0);
        assertRefused(twice, "two RC endpoints for rank 0");
    }

    @Test
    void anAddressThatCouldNotTravelIsRefusedWhenMade() {
        assertThrows(IllegalArgumentException.class, () -> new QpAddress("mlx5_0", 1, 1, 1 << 24, 0, 1, null, 5));
        assertThrows(IllegalArgumentException.class, () -> new QpAddress("mlx5_0", 0, 1, 1, 0, 1, null, 5));
        assertThrows(IllegalArgumentException.class, () -> new QpAddress("mlx5_0", 256, 1, 1, 0, 1, null, 5));
        assertThrows(IllegalArgumentException.class, () -> new QpAddress("mlx5_0", 1, 3, 1, 0, 1, null, 5));
        assertThrows(IllegalArgumentException.class, () -> new QpAddress("mlx5_0", 1, 1, 1, 0, 1, null, 6));
        assertThrows(IllegalArgumentException.class, () -> new QpAddress("m".repeat(65), 1, 1, 1, 0, 1, null, 5));
        assertThrows(IllegalArgumentException.class, () -> new RcEndpoints(Map.of(-1, ROCE)));
        String all = ROCE.describe();
        assertTrue(all.contains("QP 0xabcdef on mlx5_3 port 1 (Ethernet") && all.contains("PSN 0x123456")
                && all.contains("GID 0000:0000:0000:0000:0000:ffff:0a00:0007") && all.contains("path MTU 4096"), all);
    }

    private static void assertRefused(byte[] bytes, String... why) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RcEndpoints.decode("rank 3 (pid 9 on h)", bytes));
        assertTrue(e.getMessage().contains("rank 3 (pid 9 on h)"), e.getMessage());
        for (String w : why) {
            assertTrue(e.getMessage().contains(w), e.getMessage());
        }
    }
}
