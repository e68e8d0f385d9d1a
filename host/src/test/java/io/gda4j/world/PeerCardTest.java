package io.gda4j.world;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import org.junit.jupiter.api.Test;

/** The card each process publishes: its bytes against {@link PeerCardDescriptor}, and refusals of foreign bytes. */
class PeerCardTest {
    static byte[] handle(int seed) {
        byte[] h = new byte[PeerCardDescriptor.HEAP_HANDLE_BYTES];
        for (int i = 0; i < h.length; i++) {
            h[i] = (byte) (seed * 31 + i);
        }
        return h;
    }

    static PeerCard card(int rank, int size, String host, String gpu) {
        return new PeerCard(rank, size, 4000 + rank, 1 << 20, PeerCard.hostId(host, "boot-1"), handle(rank), gpu,
                "0000:" + gpu.hashCode() % 90 + ":00.0", host);
    }

    @Test
    void encodesEveryFieldAtItsDescriptorOffset() {
        PeerCard c = new PeerCard(3, 8, 123456789L, 64L << 20, PeerCard.hostId("node7", "b"), handle(7),
                "GPU-aaaa", "0000:19:00.0", "node7");
        ByteBuffer b = ByteBuffer.wrap(c.encode());
        assertEquals(PeerCardDescriptor.MAGIC, b.getInt(PeerCardDescriptor.MAGIC_OFFSET));
        assertEquals(PeerCardDescriptor.VERSION, b.getShort(PeerCardDescriptor.VERSION_OFFSET));
        assertEquals(PeerCardDescriptor.FLAG_HEAP_EXPORTED, b.getShort(PeerCardDescriptor.FLAGS_OFFSET));
        assertEquals(3, b.getInt(PeerCardDescriptor.RANK_OFFSET));
        assertEquals(8, b.getInt(PeerCardDescriptor.WORLD_SIZE_OFFSET));
        assertEquals(123456789L, b.getLong(PeerCardDescriptor.PID_OFFSET));
        assertEquals(64L << 20, b.getLong(PeerCardDescriptor.HEAP_BYTES_OFFSET));
        assertArrayEquals(PeerCard.hostId("node7", "b"), Arrays.copyOfRange(b.array(),
                PeerCardDescriptor.HOST_ID_OFFSET,
                PeerCardDescriptor.HOST_ID_OFFSET + PeerCardDescriptor.HOST_ID_BYTES));
        assertArrayEquals(handle(7), Arrays.copyOfRange(b.array(), PeerCardDescriptor.HEAP_HANDLE_OFFSET,
                PeerCardDescriptor.HEAP_HANDLE_OFFSET + PeerCardDescriptor.HEAP_HANDLE_BYTES));
        assertEquals(8, b.getShort(PeerCardDescriptor.STRINGS_OFFSET));
        assertEquals("GPU-aaaa",
                new String(b.array(), PeerCardDescriptor.STRINGS_OFFSET + 2, 8, StandardCharsets.UTF_8));
        assertEquals(PeerCardDescriptor.STRINGS_OFFSET + 6 + 8 + 12 + 5, b.capacity());
        assertEquals(c, PeerCard.decode(3, c.encode()));
    }

    @Test
    void aCardWithoutAnExportedHeapSaysSo() {
        PeerCard c = new PeerCard(0, 2, 1, 4096, PeerCard.hostId("h", "b"), null, "GPU-x", "bus", "h");
        byte[] bytes = c.encode();
        assertEquals(0, ByteBuffer.wrap(bytes).getShort(PeerCardDescriptor.FLAGS_OFFSET));
        assertNull(PeerCard.decode(0, bytes).heapHandle());
    }

    @Test
    void foreignTruncatedOrPaddedBytesAreRefusedNamingTheRank() {
        byte[] good = card(1, 2, "h", "GPU-1").encode();
        byte[] wrongMagic = good.clone();
        wrongMagic[0] ^= 1;
        WorldSetupException e = assertThrows(WorldSetupException.class, () -> PeerCard.decode(1, wrongMagic));
        assertTrue(e.getMessage().contains("rank 1") && e.getMessage().contains("same gda4j version"), e.getMessage());
        byte[] wrongVersion = good.clone();
        wrongVersion[PeerCardDescriptor.VERSION_OFFSET + 1]++;
        assertThrows(WorldSetupException.class, () -> PeerCard.decode(1, wrongVersion));
        for (int cut : new int[] {0, 3, PeerCardDescriptor.STRINGS_OFFSET, good.length - 1}) {
            WorldSetupException t = assertThrows(WorldSetupException.class,
                    () -> PeerCard.decode(1, Arrays.copyOf(good, cut)), "cut at " + cut);
            assertTrue(t.getMessage().contains("rank 1"), t.getMessage());
        }
        WorldSetupException padded = assertThrows(WorldSetupException.class,
                () -> PeerCard.decode(1, Arrays.copyOf(good, good.length + 1)));
        assertTrue(padded.getMessage().contains("after its last field"), padded.getMessage());
        byte[] longString = good.clone();
        ByteBuffer.wrap(longString).putShort(PeerCardDescriptor.STRINGS_OFFSET, (short) 0xffff);
        assertThrows(WorldSetupException.class, () -> PeerCard.decode(1, longString));
    }

    @Test
    void stringsOverTheLimitAreRefusedWhenEncoding() {
        String longName = "h".repeat(PeerCardDescriptor.MAX_STRING_BYTES + 1);
        PeerCard c = new PeerCard(0, 1, 1, 8, PeerCard.hostId("h", ""), null, "GPU", "bus", longName);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, c::encode);
        assertTrue(e.getMessage().contains("host name"), e.getMessage());
        PeerCard atLimit = new PeerCard(0, 1, 1, 8, PeerCard.hostId("h", ""), null, "GPU", "bus",
                longName.substring(1));
        assertTrue(atLimit.encode().length <= PeerCardDescriptor.MAX_LENGTH);
    }

    @Test
    void hostIdsSeparateHostNamesAndBoots() {
        assertArrayEquals(PeerCard.hostId("a", "boot"), PeerCard.hostId("a", "boot"));
        assertFalse(Arrays.equals(PeerCard.hostId("a", "boot"), PeerCard.hostId("b", "boot")),
                "containers of one machine");
        assertFalse(Arrays.equals(PeerCard.hostId("a", "boot"), PeerCard.hostId("a", "boot2")),
                "machines sharing a name");
        assertFalse(Arrays.equals(PeerCard.hostId("ab", "c"), PeerCard.hostId("a", "bc")), "the separator counts");
        assertArrayEquals(PeerCard.localHostId(), PeerCard.localHostId());
        assertTrue(card(0, 2, "h", "GPU-1").sameHost(card(1, 2, "h", "GPU-2")));
        assertFalse(card(0, 2, "h", "GPU-1").sameGpu(card(1, 2, "h", "GPU-2")));
        assertTrue(card(0, 2, "h", "GPU-1").sameGpu(card(1, 2, "h", "GPU-1")));
        assertTrue(card(0, 2, "h", "GPU-1").sameGpu(card(1, 2, "k", "GPU-1")),
                "one UUID is one GPU, whatever host a process counts as (named hosts of one machine)");
    }
}
