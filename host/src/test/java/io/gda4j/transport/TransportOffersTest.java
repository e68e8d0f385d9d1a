package io.gda4j.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The second all-gather of a {@code world.ProcessWorld}: each process's transport offers and its NIC-atomics bit
 * ({@link TransportOffersDescriptor}) and their refusal when malformed (world.AtomicRoutingTest: the routing they
 * drive).
 */
class TransportOffersTest {
    @Test
    void offersRoundTripAtTheDocumentedOffsets() {
        Map<String, byte[]> offers = new LinkedHashMap<>();
        offers.put("ibgda", new byte[] {1, 2, 3});
        offers.put("proxy", new byte[0]);
        TransportOffers mine = new TransportOffers(2, true, offers);
        byte[] bytes = mine.encode();
        ByteBuffer b = ByteBuffer.wrap(bytes);
        assertEquals(TransportOffersDescriptor.MAGIC, b.getInt(TransportOffersDescriptor.MAGIC_OFFSET));
        assertEquals(TransportOffersDescriptor.VERSION, b.getShort(TransportOffersDescriptor.VERSION_OFFSET));
        assertEquals(TransportOffersDescriptor.FLAG_NIC_ATOMICS, b.getShort(TransportOffersDescriptor.FLAGS_OFFSET));
        assertEquals(2, b.getInt(TransportOffersDescriptor.RANK_OFFSET));
        assertEquals(2, b.getShort(TransportOffersDescriptor.COUNT_OFFSET));
        assertEquals(5, b.getShort(TransportOffersDescriptor.OFFERS_OFFSET), "the first name's length");
        TransportOffers read = TransportOffers.decode(2, bytes);
        assertEquals(mine, read);
        assertTrue(read.nicAtomics());
        assertArrayEquals(new byte[] {1, 2, 3}, read.offer("ibgda"));
        assertNull(read.offer("p2p"), "a transport the process does not use offered nothing");
        TransportOffers none = TransportOffers.decode(0, new TransportOffers(0, false, Map.of()).encode());
        assertFalse(none.nicAtomics());
        assertTrue(none.offers().isEmpty());
    }

    @Test
    void malformedOffersAreRefusedNamingTheRank() {
        byte[] good = new TransportOffers(1, false, Map.of("ibgda", new byte[] {9})).encode();
        byte[] magic = good.clone();
        magic[1] ^= 1;
        TransportSetupException e = assertThrows(TransportSetupException.class, () -> TransportOffers.decode(1, magic));
        assertTrue(e.getMessage().startsWith("rank 1 published no gda4j transport offers of version 1"),
                e.getMessage());
        assertTrue(assertThrows(TransportSetupException.class, () -> TransportOffers.decode(3, good)).getMessage()
                .contains("rank 3's transport offers say they are rank 1's"));
        byte[] cut = java.util.Arrays.copyOf(good, good.length - 1);
        assertTrue(assertThrows(TransportSetupException.class, () -> TransportOffers.decode(1, cut)).getMessage()
                .contains("cut short or malformed"));
        byte[] huge = good.clone();
        ByteBuffer.wrap(huge).putInt(TransportOffersDescriptor.OFFERS_OFFSET + 2 + 5, -1);
        assertTrue(assertThrows(TransportSetupException.class, () -> TransportOffers.decode(1, huge)).getMessage()
                .contains("an offer of 4294967295 bytes"));
        assertThrows(IllegalArgumentException.class, () -> new TransportOffers(0, false,
                Map.of("x", new byte[TransportOffersDescriptor.MAX_OFFER_BYTES + 1])).encode());
    }

    @Test
    void aRemotePeerCarriesItsOfferByValue() {
        byte[] offer = {1, 2};
        RemotePeer peer = new RemotePeer(1, 1L << 40, 1 << 20, true, true, "rank 1").withOffer(offer);
        offer[0] = 9;
        assertArrayEquals(new byte[] {1, 2}, peer.offer());
        assertNull(peer.withOffer(null).offer());
        assertEquals(peer, new RemotePeer(1, 1L << 40, 1 << 20, true, true, "rank 1", new byte[] {1, 2}));
    }
}
