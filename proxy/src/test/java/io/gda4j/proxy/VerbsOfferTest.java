package io.gda4j.proxy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.nic.NicAccess;
import io.gda4j.nic.QpAddress;
import io.gda4j.nic.RcEndpoints;
import io.gda4j.nic.RcEndpointsDescriptor;
import io.gda4j.verbs.Gid;
import io.gda4j.verbs.VerbsConstants;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

/** The verbs handler's offer to other processes ({@link VerbsOfferDescriptor}): its bytes, and their refusal. */
class VerbsOfferTest {
    static final byte[] CREDITS = "/proc/4242/fd/17 gda4j-0123-rank-1-credit-blocks".getBytes(StandardCharsets.UTF_8);
    static final byte[] LOCK = new byte[64];

    static {
        for (int i = 0; i < LOCK.length; i++) {
            LOCK[i] = (byte) (3 * i + 1);
        }
    }

    static final VerbsOffer OFFER = new VerbsOffer(0x2a015a, 0x7f00_1234_0000L, 64L << 20, NicAccess.HEAP, 0x2a0291,
            0x7f55_0000_1000L, 4, CREDITS, LOCK);

    @Test
    void anOfferRoundTripsAtTheDocumentedOffsets() {
        byte[] bytes = OFFER.encode();
        assertEquals(VerbsOfferDescriptor.length(CREDITS.length, LOCK.length) + RcEndpointsDescriptor.ENTRIES_OFFSET,
                bytes.length, "an empty endpoint table: the emulated NIC's offer");
        ByteBuffer b = ByteBuffer.wrap(bytes);
        assertEquals(VerbsOfferDescriptor.MAGIC, b.getInt(VerbsOfferDescriptor.MAGIC_OFFSET));
        assertEquals(VerbsOfferDescriptor.VERSION, b.getShort(VerbsOfferDescriptor.VERSION_OFFSET));
        assertEquals(NicAccess.flags(NicAccess.HEAP), b.getShort(VerbsOfferDescriptor.ACCESS_OFFSET));
        assertEquals(0x2a015a, b.getInt(VerbsOfferDescriptor.HEAP_RKEY_OFFSET));
        assertEquals(0x7f00_1234_0000L, b.getLong(VerbsOfferDescriptor.HEAP_ADDRESS_OFFSET));
        assertEquals(64L << 20, b.getLong(VerbsOfferDescriptor.HEAP_BYTES_OFFSET));
        assertEquals(0x2a0291, b.getInt(VerbsOfferDescriptor.CREDITS_RKEY_OFFSET));
        assertEquals(0x7f55_0000_1000L, b.getLong(VerbsOfferDescriptor.CREDITS_ADDRESS_OFFSET));
        assertEquals(4, b.getInt(VerbsOfferDescriptor.CREDIT_BLOCKS_OFFSET));
        int at = VerbsOfferDescriptor.CREDITS_HANDLE_OFFSET;
        assertEquals(CREDITS.length, b.getShort(at));
        byte[] credits = new byte[CREDITS.length];
        b.get(at + 2, credits);
        assertArrayEquals(CREDITS, credits);
        at += 2 + CREDITS.length;
        assertEquals(LOCK.length, b.getShort(at));
        byte[] lock = new byte[LOCK.length];
        b.get(at + 2, lock);
        assertArrayEquals(LOCK, lock);
        assertEquals(OFFER, VerbsOffer.decode("rank 1", bytes));
        assertArrayEquals(bytes, VerbsOffer.decode("rank 1", bytes).encode());
    }

    /**
     * Over mlx5 nothing is lent as mapped memory (both handles empty) and the offer ends with the endpoint of the QP
     * this rank made for each pair, under the other rank of the pair.
     */
    @Test
    void anMlx5OfferCarriesEmptyHandlesAndAnEndpointPerPair() {
        byte[] gid = new byte[16];
        gid[15] = 9;
        QpAddress forRank0 = new QpAddress("mlx5_4", 1, VerbsConstants.IBV_LINK_LAYER_ETHERNET, 0x3344, 0x55,
                0, Gid.of(gid), VerbsConstants.IBV_MTU_1024);
        RcEndpoints endpoints = new RcEndpoints(Map.of(0, forRank0));
        VerbsOffer offer = new VerbsOffer(0x2a015a, 0x7f00_1234_0000L, 64L << 20, NicAccess.HEAP, 0x2a0291,
                0x7f55_0000_1000L, 2, new byte[0], new byte[0], endpoints);
        byte[] bytes = offer.encode();
        int at = VerbsOfferDescriptor.length(0, 0);
        assertEquals(at + endpoints.encodedBytes(), bytes.length);
        assertEquals(endpoints, RcEndpoints.decode("rank 1", java.util.Arrays.copyOfRange(bytes, at, bytes.length)));
        VerbsOffer back = VerbsOffer.decode("rank 1", bytes);
        assertEquals(offer, back);
        assertEquals(forRank0, back.endpoints().forRank(0).orElseThrow());
        byte[] badMtu = bytes.clone();
        badMtu[at + RcEndpointsDescriptor.ENTRIES_OFFSET + RcEndpointsDescriptor.PATH_MTU_OFFSET] = 9;
        assertRefused(badMtu, "RC endpoint for rank 0 is malformed: path MTU 9");
        byte[] cut = java.util.Arrays.copyOf(bytes, bytes.length - 3);
        assertRefused(cut, "RC endpoints are cut short");
    }

    @Test
    void theCreditBlockForARankIsItsSlotInTheOffersBlocks() {
        assertEquals(0x7f55_0000_1000L, OFFER.creditBlockFor(0));
        assertEquals(0x7f55_0000_1000L + 3 * CreditBlockDescriptor.LENGTH, OFFER.creditBlockFor(3));
        assertEquals(4 * CreditBlockDescriptor.LENGTH, OFFER.creditsBytes());
        assertThrows(IllegalArgumentException.class, () -> OFFER.creditBlockFor(4));
        assertThrows(IllegalArgumentException.class, () -> OFFER.creditBlockFor(-1));
    }

    /** Relaxed ordering is IBV_ACCESS bit 20, past the field's 16 bits: it travels as bit 15, so the sender into this
     * heap learns that a SET signal could pass its data there. */
    @Test
    void aRelaxedOrderingRegistrationCrossesToTheOtherProcess() {
        Set<NicAccess> relaxed = EnumSet.copyOf(NicAccess.HEAP);
        relaxed.add(NicAccess.RELAXED_ORDERING);
        VerbsOffer offer = new VerbsOffer(1 << 8, 0, 1, relaxed, 2 << 8, 0, 1, CREDITS, LOCK);
        byte[] bytes = offer.encode();
        assertEquals(NicAccess.flags(NicAccess.HEAP) | VerbsOfferDescriptor.ACCESS_RELAXED_ORDERING,
                Short.toUnsignedInt(ByteBuffer.wrap(bytes).getShort(VerbsOfferDescriptor.ACCESS_OFFSET)));
        assertEquals(relaxed, VerbsOffer.decode("rank 1", bytes).heapAccess());
    }

    @Test
    void malformedOffersAreRefusedNamingTheirSender() {
        byte[] good = OFFER.encode();
        byte[] magic = good.clone();
        magic[0] ^= 1;
        assertRefused(magic, "same gda4j version");
        byte[] version = good.clone();
        version[VerbsOfferDescriptor.VERSION_OFFSET + 1]++;
        assertRefused(version, "same gda4j version");
        assertRefused(java.util.Arrays.copyOf(good, good.length - 1), "cut short");
        assertRefused(java.util.Arrays.copyOf(good, good.length + 3), "3 bytes after its last field");
        byte[] access = good.clone();
        access[VerbsOfferDescriptor.ACCESS_OFFSET] |= 0x40;
        assertRefused(access, "unknown access bits");
        byte[] noBlocks = good.clone();
        ByteBuffer.wrap(noBlocks).putInt(VerbsOfferDescriptor.CREDIT_BLOCKS_OFFSET, 0);
        assertRefused(noBlocks, "0 credit blocks");
        byte[] longHandle = good.clone();
        ByteBuffer.wrap(longHandle).putShort(VerbsOfferDescriptor.CREDITS_HANDLE_OFFSET,
                (short) (VerbsOfferDescriptor.MAX_HANDLE_BYTES + 1));
        assertRefused(longHandle, "credits handle of " + (VerbsOfferDescriptor.MAX_HANDLE_BYTES + 1) + " bytes");
        assertThrows(IllegalArgumentException.class, () -> new VerbsOffer(1, 0, 1, NicAccess.HEAP, 1, 0, 1,
                new byte[VerbsOfferDescriptor.MAX_HANDLE_BYTES + 1], LOCK), "an offer that could not be read back");
    }

    private static void assertRefused(byte[] bytes, String why) {
        ProxyException e = assertThrows(ProxyException.class, () -> VerbsOffer.decode("rank 3 (pid 9 on h)", bytes));
        assertTrue(e.getMessage().contains("rank 3 (pid 9 on h)") && e.getMessage().contains(why), e.getMessage());
    }
}
