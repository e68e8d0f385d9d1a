package io.gda4j.ibgda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.nic.Nic;
import io.gda4j.nic.NicAccess;
import io.gda4j.nic.QpAddress;
import io.gda4j.nic.RcEndpoints;
import io.gda4j.nic.RcEndpointsDescriptor;
import io.gda4j.transport.RemotePeer;
import io.gda4j.verbs.Verbs;
import io.gda4j.verbs.VerbsConstants;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What ibgda across processes decides and exchanges without a GPU: the offer's bytes ({@link ProcessOfferDescriptor})
 * and their refusal when malformed, and which NIC and which pair of GPUs it refuses, with what to do.
 */
class IbgdaAcrossProcessesTest {
    static byte[] handle(int seed) {
        byte[] h = new byte[ProcessOfferDescriptor.WORDS_HANDLE_BYTES];
        for (int i = 0; i < h.length; i++) {
            h[i] = (byte) (seed + i);
        }
        return h;
    }

    static final ProcessOffer OFFER = new ProcessOffer(0x15a, 0x7f00_1234_0000L, 64L << 20, NicAccess.HEAP,
            IbgdaSession.ATOMIC_LOCK_OFFSET, handle(3));

    @Test
    void anOfferRoundTripsAtTheDocumentedOffsets() {
        byte[] bytes = OFFER.encode();
        assertEquals(ProcessOfferDescriptor.LENGTH_WITHOUT_ENDPOINTS, bytes.length);
        ByteBuffer b = ByteBuffer.wrap(bytes);
        assertEquals(ProcessOfferDescriptor.MAGIC, b.getInt(ProcessOfferDescriptor.MAGIC_OFFSET));
        assertEquals(ProcessOfferDescriptor.VERSION, b.getShort(ProcessOfferDescriptor.VERSION_OFFSET));
        assertEquals(NicAccess.flags(NicAccess.HEAP), b.getShort(ProcessOfferDescriptor.ACCESS_OFFSET));
        assertEquals(0x15a, b.getInt(ProcessOfferDescriptor.HEAP_RKEY_OFFSET));
        assertEquals(0x7f00_1234_0000L, b.getLong(ProcessOfferDescriptor.HEAP_ADDRESS_OFFSET));
        assertEquals(64L << 20, b.getLong(ProcessOfferDescriptor.HEAP_BYTES_OFFSET));
        assertEquals(IbgdaSession.ATOMIC_LOCK_OFFSET, b.getInt(ProcessOfferDescriptor.LOCK_OFFSET_OFFSET));
        byte[] h = new byte[ProcessOfferDescriptor.WORDS_HANDLE_BYTES];
        b.get(ProcessOfferDescriptor.WORDS_HANDLE_OFFSET, h);
        assertArrayEquals(handle(3), h);
        assertEquals(RcEndpoints.NONE, RcEndpoints.decode("rank 1", java.util.Arrays.copyOfRange(bytes,
                ProcessOfferDescriptor.ENDPOINTS_OFFSET, bytes.length)), "the emulated NIC publishes no endpoint");
        assertEquals(OFFER, ProcessOffer.decode("rank 1", bytes));
        ProcessOffer readOnly = new ProcessOffer(1 << 8, 0, 1, Set.of(NicAccess.REMOTE_READ), 0, handle(0));
        assertEquals(Set.of(NicAccess.REMOTE_READ), ProcessOffer.decode("rank 1", readOnly.encode()).heapAccess());
    }

    /** Relaxed ordering is IBV_ACCESS bit 20, past the field's 16 bits: it travels as bit 15, so the peer that posts
     * into this heap learns it may not signal with a SET there. */
    @Test
    void aRelaxedOrderingRegistrationCrossesToTheOtherProcess() {
        Set<NicAccess> relaxed = java.util.EnumSet.copyOf(NicAccess.HEAP);
        relaxed.add(NicAccess.RELAXED_ORDERING);
        ProcessOffer offer = new ProcessOffer(0x15a, 0x7f00_1234_0000L, 64L << 20, relaxed,
                IbgdaSession.ATOMIC_LOCK_OFFSET, handle(3));
        byte[] bytes = offer.encode();
        assertEquals(NicAccess.flags(NicAccess.HEAP) | ProcessOfferDescriptor.ACCESS_RELAXED_ORDERING,
                Short.toUnsignedInt(ByteBuffer.wrap(bytes).getShort(ProcessOfferDescriptor.ACCESS_OFFSET)));
        assertEquals(relaxed, ProcessOffer.decode("rank 1", bytes).heapAccess());
    }

    @Test
    void theNicWordsHaveRoomForTheLockLine() {
        assertTrue(IbgdaSession.ATOMIC_LOCK_OFFSET >= IbgdaSession.SCRATCH_OFFSET + 8);
        assertTrue(IbgdaSession.ATOMIC_LOCK_OFFSET + io.gda4j.nic.emulated.EmulatedNic.ATOMIC_LOCK_BYTES
                <= IbgdaSession.WORDS_BYTES);
        assertEquals(0, IbgdaSession.ATOMIC_LOCK_OFFSET % 8, "the lock is an 8-byte atomic word");
    }

    @Test
    void malformedOffersAreRefusedNamingTheirSender() {
        byte[] good = OFFER.encode();
        byte[] magic = good.clone();
        magic[0] ^= 1;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ProcessOffer.decode("rank 1 (pid 7)", magic));
        assertTrue(e.getMessage().startsWith("rank 1 (pid 7) published no ibgda offer of version 2"), e.getMessage());
        assertTrue(e.getMessage().contains("same gda4j version"), e.getMessage());
        byte[] shorter = java.util.Arrays.copyOf(good, good.length - 1);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ProcessOffer.decode("rank 1", shorter))
                .getMessage().contains("cut short"));
        byte[] longer = java.util.Arrays.copyOf(good, good.length + 1);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ProcessOffer.decode("rank 1", longer))
                .getMessage().contains("1 bytes after its last field"));
        byte[] access = good.clone();
        ByteBuffer.wrap(access).putShort(ProcessOfferDescriptor.ACCESS_OFFSET, (short) 0x40);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ProcessOffer.decode("rank 1", access))
                .getMessage().contains("unknown access bits 0x40"));
    }

    /**
     * Over mlx5 the offer carries, after the heap, the endpoint of the QP this rank made for each pair, under the
     * other rank of the pair; the emulated NIC's lock offset and words handle are zero there.
     */
    @Test
    void anMlx5OfferCarriesTheEndpointOfEachPairsQpAfterTheHeap() {
        QpAddress forRank0 = new QpAddress("mlx5_2", 1, VerbsConstants.IBV_LINK_LAYER_INFINIBAND, 0x1a2b, 0x77,
                0x12, null, VerbsConstants.IBV_MTU_4096);
        QpAddress forRank2 = new QpAddress("mlx5_2", 1, VerbsConstants.IBV_LINK_LAYER_INFINIBAND, 0x1a2c, 0x78,
                0x12, null, VerbsConstants.IBV_MTU_4096);
        RcEndpoints endpoints = new RcEndpoints(Map.of(0, forRank0, 2, forRank2));
        ProcessOffer offer = new ProcessOffer(0x2a015a, 0x7f00_1234_0000L, 64L << 20, NicAccess.HEAP, 0,
                new byte[ProcessOfferDescriptor.WORDS_HANDLE_BYTES], endpoints);
        byte[] bytes = offer.encode();
        assertEquals(ProcessOfferDescriptor.ENDPOINTS_OFFSET + endpoints.encodedBytes(), bytes.length);
        assertEquals(RcEndpointsDescriptor.MAGIC,
                ByteBuffer.wrap(bytes).getInt(ProcessOfferDescriptor.ENDPOINTS_OFFSET));
        assertEquals(endpoints, RcEndpoints.decode("rank 1", java.util.Arrays.copyOfRange(bytes,
                ProcessOfferDescriptor.ENDPOINTS_OFFSET, bytes.length)));
        ProcessOffer back = ProcessOffer.decode("rank 1", bytes);
        assertEquals(offer, back);
        assertEquals(forRank2, back.endpoints().forRank(2).orElseThrow());
        byte[] badEndpoint = bytes.clone();
        badEndpoint[ProcessOfferDescriptor.ENDPOINTS_OFFSET + RcEndpointsDescriptor.ENTRIES_OFFSET
                + RcEndpointsDescriptor.PORT_OFFSET] = 0;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ProcessOffer.decode("rank 1 (pid 7)", badEndpoint));
        assertTrue(e.getMessage().contains("rank 1 (pid 7)'s RC endpoint for rank 0 is malformed"), e.getMessage());
    }

    @Test
    void mlx5ConnectsProcessesAndTheEmulatedNicOnlyOverALinkWithAtomics() {
        RemotePeer withAtomics = new RemotePeer(1, 1L << 40, 1 << 20, false, true, "rank 1 (pid 7)");
        RemotePeer withoutAtomics = new RemotePeer(1, 1L << 40, 1 << 20, false, false, "rank 1 (pid 7)");
        assertTrue(IbgdaTransport.acrossProcessesReason(Nic.EMULATED, withAtomics).isEmpty());
        assertTrue(IbgdaTransport.acrossProcessesReason(Nic.MLX5, withAtomics).isEmpty());
        assertTrue(IbgdaTransport.acrossProcessesReason(Nic.MLX5, withoutAtomics).isEmpty(),
                "NIC atomics over mlx5 need no GPU atomics between the GPUs");
        String noAtomics = IbgdaTransport.acrossProcessesReason(Nic.EMULATED, withoutAtomics).orElseThrow();
        assertTrue(noAtomics.contains("lock word") && noAtomics.contains("rank 1 (pid 7)'s GPU carries no atomics")
                && noAtomics.contains("--nic mlx5") && noAtomics.contains("--transport proxy"), noAtomics);
    }

    /**
     * A rank of another host: over mlx5 by RC endpoint as any other; the emulated NIC, whose wire is CUDA IPC, only
     * where that host is a name given to a process of this machine with a heap handle and a GPU linked with atomics.
     */
    @Test
    void aPeerOnAnotherHostTakesARealNicAndTheEmulatedOneOnlyInsideOneMachine() {
        RemotePeer named = RemotePeer.onAnotherHost(1, 1 << 20, true, new byte[64], "rank 1 (pid 7 on b)");
        RemotePeer elsewhere = RemotePeer.onAnotherHost(1, 1 << 20, false, new byte[64], "rank 1 (pid 7 on b)");
        RemotePeer unexported = RemotePeer.onAnotherHost(1, 1 << 20, true, null, "rank 1 (pid 7 on b)");
        assertTrue(IbgdaTransport.acrossProcessesReason(Nic.MLX5, elsewhere).isEmpty());
        assertTrue(IbgdaTransport.acrossProcessesReason(Nic.EMULATED, named).isEmpty());
        for (RemotePeer peer : new RemotePeer[] {elsewhere, unexported}) {
            String why = IbgdaTransport.acrossProcessesReason(Nic.EMULATED, peer).orElseThrow();
            assertTrue(why.contains("inside one machine") && why.contains("rank 1 (pid 7 on b)")
                    && why.contains("--nic mlx5"), why);
        }
    }

    @Test
    void acrossHostsTheWorldQuotesWhatLibibverbsFinds() {
        assertEquals(Optional.of(Verbs.status().sentence()), new IbgdaTransport().acrossHostsStatus());
    }
}
