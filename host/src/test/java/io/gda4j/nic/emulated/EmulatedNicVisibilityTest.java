package io.gda4j.nic.emulated;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Pointer;

import io.gda4j.mlx5.CqeDecoder;
import io.gda4j.mlx5.DecodedCqe;
import io.gda4j.mlx5.DoorbellDescriptor;
import io.gda4j.mlx5.DoorbellRecordDescriptor;
import io.gda4j.mlx5.Mlx5Opcode;
import io.gda4j.mlx5.WqeDescriptor;
import io.gda4j.mlx5.WqeEncoder;
import io.gda4j.nic.HostPoster;
import io.gda4j.nic.MemoryKind;
import io.gda4j.nic.MemoryRegistration;
import io.gda4j.nic.NicAccess;
import io.gda4j.nic.NicMemory;
import io.gda4j.nic.NicQp;
import io.gda4j.nic.QpPair;
import io.gda4j.nic.QpRings;
import io.gda4j.nic.QpSpec;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.concurrent.TimeoutException;

/**
 * When data becomes visible on the strict emulated NIC, never earlier than on a ConnectX: several READs and fetching
 * atomics in flight at once, each response landing only at a fence (so a WRITE from a buffer a fetching atomic fills
 * sends stale bytes without the fence bit); a WRITE's CQE before its data in the target (writes-pass-CQE mode), so
 * "quiet, then tell the peer by another path" reads stale bytes; and relaxed ordering, chosen by the target's
 * registration, which lets a signal WRITE be seen before its data while an atomic cannot pass it.
 */
class EmulatedNicVisibilityTest extends TwoHeapNicTest {
    static final int BYTES = 64;

    static void fill(long address, int bytes, byte value) {
        byte[] b = new byte[bytes];
        Arrays.fill(b, value);
        new Pointer(address).write(0, b, 0, b.length);
    }

    static byte[] filled(int bytes, byte value) {
        byte[] b = new byte[bytes];
        Arrays.fill(b, value);
        return b;
    }

    static byte[] read(long address, int bytes) {
        return new Pointer(address).getByteArray(0, bytes);
    }

    /** Rings {@code count} WQEs written at 0.., runs the engine until they all have CQEs, returns them in order. */
    DecodedCqe[] runRaw(QpRings r, int count) {
        DoorbellRecordDescriptor.putSendCounterRelease(new Pointer(r.dbrec()).getByteBuffer(0, 8), 0, count);
        DoorbellDescriptor.putDoorbellRelease(new Pointer(r.doorbell()).getByteBuffer(0, 8), 0, count, r.qpn());
        ByteBuffer cq = new Pointer(r.cqBuf()).getByteBuffer(0, r.cqeCount() * 64L);
        long deadline = System.nanoTime() + TIMEOUT;
        while (CqeDecoder.poll(cq, count - 1) == CqeDecoder.EMPTY && System.nanoTime() < deadline) {
            nic.engine().doWork();
        }
        DecodedCqe[] cqes = new DecodedCqe[count];
        for (int i = 0; i < count; i++) {
            cqes[i] = CqeDecoder.decode(cq, i);
            assertEquals(i, cqes[i].wqeCounter(), "CQEs in posting order: " + cqes[i]);
            cqes[i].requireSuccess();
        }
        return cqes;
    }

    static ByteBuffer sq(QpRings r) {
        return new Pointer(r.sqBuf()).getByteBuffer(0, (long) r.sqWqebbs() * WqeDescriptor.WQEBB_SIZE);
    }

    // ---- item 5: more than one response in flight, and fetched values come back late ----------------------------

    /**
     * READ B[0..64) into A[0..64), READ B[64..128) into A[64..128), then WRITE A[0..64) to B[1024..): the second READ
     * must not make the first land, so without the fence bit the WRITE sends A's old bytes.
     */
    byte[] twoReadsThenWrite(boolean fenceBit) {
        try (QpPair qps = pair(64)) {
            fill(heapA, 2 * BYTES, (byte) 0x11);
            fill(heapB, 2 * BYTES, (byte) 0x22);
            QpRings r = qps.first().hostRings();
            ByteBuffer sq = sq(r);
            WqeEncoder.writeRdmaRead(sq, 0, r.qpn(), WqeDescriptor.FM_CE_SE_CQ_UPDATE, heapB, memB.rkey(), heapA,
                    memA.lkey(), BYTES);
            WqeEncoder.writeRdmaRead(sq, 1, r.qpn(), WqeDescriptor.FM_CE_SE_CQ_UPDATE, heapB + BYTES, memB.rkey(),
                    heapA + BYTES, memA.lkey(), BYTES);
            WqeEncoder.writeRdmaWrite(sq, 2, r.qpn(), WqeDescriptor.FM_CE_SE_CQ_UPDATE
                    | (fenceBit ? WqeDescriptor.FM_CE_SE_FENCE : 0), heapB + 1024, memB.rkey(), heapA, memA.lkey(),
                    BYTES);
            runRaw(r, 3);
            assertArrayEquals(filled(2 * BYTES, (byte) 0x22), read(heapA, 2 * BYTES), "both READs landed by their CQEs");
            return read(heapB + 1024, BYTES);
        }
    }

    @Test
    void aSecondReadDoesNotLandTheFirst() {
        open(new EmulatedNicConfig("backoff", false, true));
        assertArrayEquals(filled(BYTES, (byte) 0x11), twoReadsThenWrite(false),
                "two READs in flight: an unfenced WRITE may go before either response arrived");
    }

    @Test
    void theFenceBitWaitsForEveryReadInFlight() {
        open(new EmulatedNicConfig("backoff", false, true));
        assertArrayEquals(filled(BYTES, (byte) 0x22), twoReadsThenWrite(true));
    }

    /** ATOMIC_FA on B[2048] (40, add 2) fetching into A[0..8), then WRITE A[0..8) to B[1024]. Returns B[1024]. */
    long fetchAddThenWrite(boolean fenceBit) {
        try (QpPair qps = pair(64)) {
            new Pointer(heapA).setLong(0, 0x1111);
            new Pointer(heapB + 2048).setLong(0, 40);
            QpRings r = qps.first().hostRings();
            ByteBuffer sq = sq(r);
            WqeEncoder.writeAtomicFetchAdd(sq, 0, r.qpn(), WqeDescriptor.FM_CE_SE_CQ_UPDATE, heapB + 2048,
                    memB.rkey(), 2, heapA, memA.lkey());
            WqeEncoder.writeRdmaWrite(sq, 1, r.qpn(), WqeDescriptor.FM_CE_SE_CQ_UPDATE
                    | (fenceBit ? WqeDescriptor.FM_CE_SE_FENCE : 0), heapB + 1024, memB.rkey(), heapA, memA.lkey(), 8);
            DecodedCqe[] cqes = runRaw(r, 2);
            assertEquals(Mlx5Opcode.ATOMIC_FA, cqes[0].wqeOpcode());
            assertEquals(40, new Pointer(heapA).getLong(0), "the fetched value is there by the atomic's CQE");
            assertEquals(42, new Pointer(heapB + 2048).getLong(0));
            return new Pointer(heapB + 1024).getLong(0);
        }
    }

    @Test
    void aFetchingAtomicsValueArrivesLateLikeReadData() {
        open(new EmulatedNicConfig("backoff", false, true));
        assertEquals(0x1111, fetchAddThenWrite(false),
                "without the fence bit a WRITE after a fetching atomic reads its buffer before the value came back");
    }

    @Test
    void theFenceBitWaitsForTheFetchedValue() {
        open(new EmulatedNicConfig("backoff", false, true));
        assertEquals(40, fetchAddThenWrite(true));
    }

    @Test
    void theLenientNicLandsTheFetchedValueAtOnce() {
        open(new EmulatedNicConfig("backoff", false, false));
        assertEquals(40, fetchAddThenWrite(false));
    }

    // ---- item 2: a WRITE's CQE comes before its data in the target ----------------------------------------------

    @Test
    void aWritesCqeComesBeforeItsDataSoQuietThenAnotherPathReadsStaleBytes() throws TimeoutException {
        open(new EmulatedNicConfig("backoff", false, true, true));
        try (QpPair qps = pair(64)) {
            fill(heapA, BYTES, (byte) 0x33);
            HostPoster p = qps.first().hostPoster();
            p.postWrite(heapB, memB.rkey(), heapA, memA.lkey(), BYTES, TIMEOUT);
            complete(p); // quiet: the CQE is consumed
            fill(heapA, BYTES, (byte) 0x44); // the source may be reused after the CQE
            assertArrayEquals(new byte[BYTES], read(heapB, BYTES), "the responder acknowledged the WRITE before its"
                    + " data reached the target: a flag set now by another path would let the peer read stale bytes");
            p.postWriteInline(heapB + 2048, memB.rkey(), new byte[] {1, 0, 0, 0, 0, 0, 0, 0}, TIMEOUT);
            complete(p);
            assertArrayEquals(filled(BYTES, (byte) 0x33), read(heapB, BYTES),
                    "a later WRITE on the same QP (a signal) does not pass the data: it landed first, as sent");
        }
    }

    @Test
    void aFlushAtTheTargetLandsWriteData() throws TimeoutException {
        open(new EmulatedNicConfig("backoff", false, true, true));
        NicQp loopback = nic.createLoopbackQp(QpSpec.of(null, 16, "flush"));
        try (QpPair qps = pair(64)) {
            fill(heapA, BYTES, (byte) 0x55);
            HostPoster p = qps.first().hostPoster();
            p.postWrite(heapB, memB.rkey(), heapA, memA.lkey(), BYTES, TIMEOUT);
            complete(p);
            assertArrayEquals(new byte[BYTES], read(heapB, BYTES));
            HostPoster f = loopback.hostPoster();
            f.postFetchAdd(heapB + 2048, memB.rkey(), 1, 0, nic.nullMemory().lkey(), TIMEOUT);
            complete(f);
            assertArrayEquals(filled(BYTES, (byte) 0x55), read(heapB, BYTES),
                    "an atomic on the target's memory does not pass the posted writes into it");
        } finally {
            loopback.close();
        }
    }

    // ---- item 6: relaxed ordering follows the target's registration ---------------------------------------------

    long relaxed;
    NicMemory memRelaxed;

    void openWithRelaxedRegion() {
        open(new EmulatedNicConfig("backoff", false, true));
        relaxed = platform.allocate(REGION);
        platform.allowWrites(relaxed, REGION);
        EnumSet<NicAccess> access = EnumSet.copyOf(NicAccess.HEAP);
        access.add(NicAccess.RELAXED_ORDERING);
        memRelaxed = nic.registerMemory(new MemoryRegistration(null, relaxed, REGION, MemoryKind.DEVICE, access,
                "relaxed"));
    }

    @Test
    void theRelaxedFlagIsTheTargetRegistrations() {
        openWithRelaxedRegion();
        assertTrue(memRelaxed.relaxedOrdering());
        assertFalse(memB.relaxedOrdering());
        assertFalse(nic.capabilities().relaxedOrdering(), "the NIC registers nothing relaxed on its own");
        assertEquals(1 << 20, NicAccess.RELAXED_ORDERING.ibvFlag(), "IBV_ACCESS_RELAXED_ORDERING");
    }

    @Test
    void intoARelaxedRegionASignalWriteIsSeenBeforeItsDataButAnAtomicIsNot() throws TimeoutException {
        openWithRelaxedRegion();
        try (QpPair qps = pair(64)) {
            fill(heapA, BYTES, (byte) 0x66);
            HostPoster p = qps.first().hostPoster();
            p.postWrite(relaxed, memRelaxed.rkey(), heapA, memA.lkey(), BYTES, TIMEOUT);
            p.postWriteInline(relaxed + 2048, memRelaxed.rkey(), new byte[] {1, 0, 0, 0, 0, 0, 0, 0}, TIMEOUT);
            complete(p);
            assertEquals(1, new Pointer(relaxed + 2048).getLong(0), "the signal WRITE landed");
            assertArrayEquals(new byte[BYTES], read(relaxed, BYTES), "relaxed ordering: the signal was seen before"
                    + " the data written ahead of it on the same QP (so a SET signal by WRITE is unsafe there)");
            p.postFetchAdd(relaxed + 3072, memRelaxed.rkey(), 1, heapA + 1024, memA.lkey(), TIMEOUT);
            complete(p);
            assertArrayEquals(filled(BYTES, (byte) 0x66), read(relaxed, BYTES),
                    "an atomic on the region does not pass the relaxed writes before it");
        }
    }

    @Test
    void aSignalIntoAStrictlyOrderedRegionLandsRelaxedDataFirst() throws TimeoutException {
        openWithRelaxedRegion();
        try (QpPair qps = pair(64)) {
            fill(heapA, BYTES, (byte) 0x12);
            HostPoster p = qps.first().hostPoster();
            p.postWrite(relaxed, memRelaxed.rkey(), heapA, memA.lkey(), BYTES, TIMEOUT);
            p.postWriteInline(heapB + 2048, memB.rkey(), new byte[] {1, 0, 0, 0, 0, 0, 0, 0}, TIMEOUT);
            complete(p);
            assertEquals(1, new Pointer(heapB + 2048).getLong(0));
            assertArrayEquals(filled(BYTES, (byte) 0x12), read(relaxed, BYTES),
                    "a write without relaxed ordering does not pass the writes before it");
        }
    }

    @Test
    void writesIntoAStrictlyOrderedRegionLandAtOnceInStrictMode() throws TimeoutException {
        openWithRelaxedRegion();
        try (QpPair qps = pair(64)) {
            fill(heapA, BYTES, (byte) 0x21);
            HostPoster p = qps.first().hostPoster();
            p.postWrite(heapB, memB.rkey(), heapA, memA.lkey(), BYTES, TIMEOUT);
            complete(p);
            assertArrayEquals(filled(BYTES, (byte) 0x21), read(heapB, BYTES));
        }
    }

    @Test
    void manyHeldWritesEachLandTheirOwnPayload() throws TimeoutException {
        openWithRelaxedRegion(); // writes into it are held and do not land each other
        try (QpPair qps = pair(16)) {
            HostPoster p = qps.first().hostPoster();
            // More WRITEs than the send queue holds (the held list fills and lands on its own), of mixed sizes, so
            // the staging area is reused while some payloads are still held.
            int writes = 30;
            long offset = 0;
            long[] at = new long[writes];
            int[] size = new int[writes];
            for (int i = 0; i < writes; i++) {
                size[i] = i < 17 ? 24 : 64;
                at[i] = offset;
                p.postWriteInline(relaxed + offset, memRelaxed.rkey(), filled(size[i], (byte) (i + 1)), TIMEOUT);
                complete(p);
                offset += size[i];
            }
            p.postFetchAdd(relaxed + 3072, memRelaxed.rkey(), 1, heapA, memA.lkey(), TIMEOUT);
            complete(p);
            for (int i = 0; i < writes; i++) {
                assertArrayEquals(filled(size[i], (byte) (i + 1)), read(relaxed + at[i], size[i]), "WRITE " + i);
            }
        }
    }
}
