package io.gda4j.nic.emulated;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Pointer;

import io.gda4j.mlx5.CompletionErrorException;
import io.gda4j.mlx5.CqeDecoder;
import io.gda4j.mlx5.CqeSyndrome;
import io.gda4j.mlx5.DecodedCqe;
import io.gda4j.mlx5.DoorbellDescriptor;
import io.gda4j.mlx5.DoorbellRecordDescriptor;
import io.gda4j.mlx5.Mlx5Opcode;
import io.gda4j.mlx5.WqeDescriptor;
import io.gda4j.mlx5.WqeEncoder;
import io.gda4j.nic.HostPoster;
import io.gda4j.nic.RingPoster;
import io.gda4j.nic.MemoryKind;
import io.gda4j.nic.MemoryRegistration;
import io.gda4j.nic.NicAccess;
import io.gda4j.nic.NicMemory;
import io.gda4j.nic.NicQp;
import io.gda4j.nic.QpPair;
import io.gda4j.nic.QpRings;
import io.gda4j.nic.QpSpec;
import io.gda4j.nic.QpState;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The emulated NIC's engine on host memory (no CUDA): every opcode, every fault class with the syndrome and the
 * exception text, the error state with WR_FLUSH, null-region semantics, ring and 16-bit counter wrap, CQ overrun.
 */
class EmulatedEngineTest extends TwoHeapNicTest {
    static final long TIMEOUT = TimeUnit.SECONDS.toNanos(10);


    @BeforeEach
    void open() {
        // Retry time 0: a peer that does not answer fails at the engine's second look (EmulatedNicRcTest: retries).
        open(new EmulatedNicConfig("backoff", false).withRetryNanos(0));
    }

    /** Rings, runs the engine until quiet, then reaps (so failures surface as exceptions). */
    void complete(HostPoster p) throws TimeoutException {
        p.ring();
        for (int i = 0; i < 10_000 && p.retiredIndex() < p.producerIndex(); i++) {
            nic.engine().doWork();
            p.poll();
        }
        p.quiet(TIMEOUT);
    }

    static void fill(long address, byte[] bytes) {
        new Pointer(address).write(0, bytes, 0, bytes.length);
    }

    static byte[] read(long address, int length) {
        return new Pointer(address).getByteArray(0, length);
    }

    static byte[] pattern(int length, int seed) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void writeCopiesTheBytesAndCompletes() throws TimeoutException {
        try (QpPair qps = pair(64)) {
            byte[] data = pattern(1000, 1);
            fill(heapA + 24, data);
            HostPoster p = qps.first().hostPoster();
            p.postWrite(heapB + 100, memB.rkey(), heapA + 24, memA.lkey(), data.length, TIMEOUT);
            complete(p);
            assertArrayEquals(data, read(heapB + 100, data.length));
            assertEquals(0, read(heapB + 99, 1)[0], "the byte before the destination is untouched");
            assertEquals(0, read(heapB + 1100, 1)[0], "the byte after the destination is untouched");
        }
    }

    @Test
    void inlineWritesOfEveryShapeLand() throws TimeoutException {
        try (QpPair qps = pair(64)) {
            HostPoster p = qps.first().hostPoster();
            int[] lengths = {1, 8, 16, 28, 29, 60, 200};
            long offset = 0;
            for (int length : lengths) {
                byte[] payload = pattern(length, length);
                p.postWriteInline(heapB + offset, memB.rkey(), payload, TIMEOUT);
                complete(p);
                assertArrayEquals(payload, read(heapB + offset, length), length + "-byte inline write");
                offset += 256;
            }
        }
    }

    @Test
    void readFetchesIntoLocalMemory() throws TimeoutException {
        try (QpPair qps = pair(64)) {
            byte[] data = pattern(333, 2);
            fill(heapB + 7, data);
            HostPoster p = qps.first().hostPoster();
            p.postRead(heapB + 7, memB.rkey(), heapA + 1000, memA.lkey(), data.length, TIMEOUT);
            complete(p);
            assertArrayEquals(data, read(heapA + 1000, data.length));
        }
    }

    @Test
    void atomicsAddSwapAndReturnTheOldValue() throws TimeoutException {
        try (QpPair qps = pair(64)) {
            new Pointer(heapB + 64).setLong(0, 40);
            HostPoster p = qps.first().hostPoster();
            p.postFetchAdd(heapB + 64, memB.rkey(), 2, heapA + 8, memA.lkey(), TIMEOUT);
            p.postCompareSwap(heapB + 64, memB.rkey(), 42, 7, heapA + 16, memA.lkey(), TIMEOUT);
            p.postCompareSwap(heapB + 64, memB.rkey(), 42, 9, heapA + 24, memA.lkey(), TIMEOUT);
            complete(p);
            assertEquals(7, new Pointer(heapB + 64).getLong(0));
            assertEquals(40, new Pointer(heapA + 8).getLong(0));
            assertEquals(42, new Pointer(heapA + 16).getLong(0));
            assertEquals(7, new Pointer(heapA + 24).getLong(0), "a failed compare still returns the old value");
        }
    }

    @Test
    void nullRegionDropsTheFetchedValueOfTheFlushAtomic() throws TimeoutException {
        NicQp flush = nic.createLoopbackQp(QpSpec.of(null, 16, "flush"));
        try {
            NicMemory none = nic.nullMemory();
            assertTrue(none.isNull());
            HostPoster p = flush.hostPoster();
            long before = platform.operations;
            p.postFetchAdd(heapA + 128, memA.rkey(), 1, 0xdead0000L, none.lkey(), TIMEOUT);
            p.postFetchAdd(heapA + 128, memA.rkey(), 1, 0, none.lkey(), TIMEOUT);
            complete(p);
            assertEquals(2, new Pointer(heapA + 128).getLong(0));
            assertEquals(2, platform.operations - before, "two atomics, no write for the fetched values");
        } finally {
            flush.close();
        }
    }

    // ---- faults: one per class, with the syndrome, the exception text, the error state and WR_FLUSH ---------------

    CompletionErrorException expectFault(HostPoster p, NicQp qp) {
        CompletionErrorException e = assertThrows(CompletionErrorException.class, () -> complete(p));
        assertEquals(QpState.ERROR, qp.state());
        String text = e.getMessage();
        assertTrue(text.contains(String.format("QP 0x%06x", qp.qpn())), text);
        assertTrue(text.contains("WQE index " + e.wqeIndex()), text);
        return e;
    }

    void assertFault(CqeSyndrome syndrome, EmulatedFault why, WqePoster post) throws TimeoutException {
        try (QpPair qps = pair(64)) {
            RingPoster p = new RingPoster(qps.first());
            p.postNop(TIMEOUT);
            post.post(p);
            p.postNop(TIMEOUT); // flushed
            CompletionErrorException e = expectFault(p, qps.first());
            assertEquals(syndrome, e.syndrome(), e.getMessage());
            assertEquals(why.vendorSyndrome(), e.cqe().vendorSyndrome(), e.getMessage());
            assertEquals(1, e.wqeIndex(), "the NOP before completes; the second WQE fails");
            assertTrue(e.getMessage().contains(syndrome.name()), e.getMessage());
            CompletionErrorException flushedError = assertThrows(CompletionErrorException.class, p::poll);
            assertEquals(CqeSyndrome.WR_FLUSH, flushedError.syndrome());
            assertEquals(2, flushedError.wqeIndex());
            assertTrue(nic.faults().get(nic.faults().size() - 1).contains(why.description()), nic.faults().toString());
        }
    }

    interface WqePoster {
        void post(RingPoster p) throws TimeoutException;
    }

    @Test
    void unknownRkeyIsARemoteAccessError() throws TimeoutException {
        assertFault(CqeSyndrome.REMOTE_ACCESS, EmulatedFault.UNKNOWN_RKEY,
                p -> p.postWrite(heapB, 0x12345678, heapA, memA.lkey(), 8, TIMEOUT));
    }

    @Test
    void remoteRangeOverrunIsARemoteAccessError() throws TimeoutException {
        assertFault(CqeSyndrome.REMOTE_ACCESS, EmulatedFault.REMOTE_OUT_OF_RANGE,
                p -> p.postWrite(heapB + REGION - 4, memB.rkey(), heapA, memA.lkey(), 8, TIMEOUT));
    }

    @Test
    void missingRemoteRightIsARemoteAccessError() throws TimeoutException {
        long ro = platform.allocate(64);
        NicMemory readOnly = nic.registerMemory(new MemoryRegistration(null, ro, 64, MemoryKind.DEVICE,
                EnumSet.of(NicAccess.REMOTE_READ), "read-only"));
        assertFault(CqeSyndrome.REMOTE_ACCESS, EmulatedFault.REMOTE_NO_ACCESS,
                p -> p.postWrite(ro, readOnly.rkey(), heapA, memA.lkey(), 8, TIMEOUT));
        assertFault(CqeSyndrome.REMOTE_ACCESS, EmulatedFault.REMOTE_NO_ACCESS,
                p -> p.postFetchAdd(ro, readOnly.rkey(), 1, heapA, memA.lkey(), TIMEOUT));
    }

    @Test
    void deregisteredKeyStopsWorking() throws TimeoutException {
        int stale = memB.rkey();
        memB.close();
        assertFault(CqeSyndrome.REMOTE_ACCESS, EmulatedFault.UNKNOWN_RKEY,
                p -> p.postWrite(heapB, stale, heapA, memA.lkey(), 8, TIMEOUT));
    }

    @Test
    void badLkeyAndLocalRangeAreLocalProtectionErrors() throws TimeoutException {
        assertFault(CqeSyndrome.LOCAL_PROT, EmulatedFault.UNKNOWN_LKEY,
                p -> p.postWrite(heapB, memB.rkey(), heapA, 0x777, 8, TIMEOUT));
        assertFault(CqeSyndrome.LOCAL_PROT, EmulatedFault.LOCAL_OUT_OF_RANGE,
                p -> p.postWrite(heapB, memB.rkey(), heapA - 8, memA.lkey(), 16, TIMEOUT));
    }

    @Test
    void readIntoRegionWithoutLocalWriteIsALocalProtectionError() throws TimeoutException {
        long src = platform.allocate(64);
        NicMemory sourceOnly = nic.registerMemory(new MemoryRegistration(null, src, 64, MemoryKind.DEVICE,
                Set.of(), "source only"));
        assertFault(CqeSyndrome.LOCAL_PROT, EmulatedFault.LOCAL_NO_WRITE,
                p -> p.postRead(heapB, memB.rkey(), src, sourceOnly.lkey(), 8, TIMEOUT));
    }

    @Test
    void misalignedAtomicIsAnInvalidRequest() throws TimeoutException {
        assertFault(CqeSyndrome.REMOTE_INVAL_REQ, EmulatedFault.MISALIGNED_ATOMIC,
                p -> p.postFetchAdd(heapB + 4, memB.rkey(), 1, heapA, memA.lkey(), TIMEOUT));
    }

    @Test
    void malformedWqesAreLocalQpOperationOrLengthErrors() throws TimeoutException {
        try (QpPair qps = pair(64)) {
            QpRings r = qps.first().hostRings();
            ByteBuffer sq = new Pointer(r.sqBuf()).getByteBuffer(0, (long) r.sqWqebbs() * 64);
            // An atomic whose data segment says 4 bytes: LOCAL_LENGTH.
            WqeEncoder.writeAtomicFetchAdd(sq, 0, r.qpn(), WqeDescriptor.FM_CE_SE_CQ_UPDATE, heapB, memB.rkey(), 1,
                    heapA, memA.lkey());
            sq.put(WqeDescriptor.segmentOffset(0, WqeDescriptor.ATOMIC_DATA_SEGMENT, r.sqWqebbs()) + 3, (byte) 4);
            DoorbellRecordDescriptor.putSendCounterRelease(new Pointer(r.dbrec()).getByteBuffer(0, 8), 0, 1);
            DoorbellDescriptor.putDoorbellRelease(new Pointer(r.doorbell()).getByteBuffer(0, 8), 0, 1, r.qpn());
            nic.engine().doWork();
            DecodedCqe cqe = CqeDecoder.decode(new Pointer(r.cqBuf()).getByteBuffer(0, r.cqeCount() * 64L), 0);
            assertEquals(CqeSyndrome.LOCAL_LENGTH.code(), cqe.syndrome(), cqe.toString());
            assertEquals(Mlx5Opcode.ATOMIC_FA, cqe.wqeOpcode());
        }
        assertFault(CqeSyndrome.RNR_RETRY_EXC, EmulatedFault.NO_RECEIVE_QUEUE, p -> {
            QpRings r = p.qp().hostRings();
            ByteBuffer sq = new Pointer(r.sqBuf()).getByteBuffer(0, (long) r.sqWqebbs() * 64);
            long at = p.postNop(TIMEOUT);
            WqeEncoder.writeRdmaWriteImm(sq, at, r.qpn(), WqeDescriptor.FM_CE_SE_CQ_UPDATE, 5, heapB, memB.rkey(),
                    heapA, memA.lkey(), 8);
        });
    }

    @Test
    void closedPeerIsATransportRetryError() throws TimeoutException {
        try (QpPair qps = pair(64)) {
            qps.second().close();
            HostPoster p = qps.first().hostPoster();
            p.postWrite(heapB, memB.rkey(), heapA, memA.lkey(), 8, TIMEOUT);
            CompletionErrorException e = expectFault(p, qps.first());
            assertEquals(CqeSyndrome.TRANSPORT_RETRY_EXC, e.syndrome());
        }
    }

    @Test
    void nothingRunsAfterAnErrorEvenValidWork() throws TimeoutException {
        try (QpPair qps = pair(64)) {
            HostPoster p = qps.first().hostPoster();
            p.postWrite(heapB, 0x999, heapA, memA.lkey(), 8, TIMEOUT);
            fill(heapA, pattern(8, 3));
            p.postWrite(heapB, memB.rkey(), heapA, memA.lkey(), 8, TIMEOUT);
            assertThrows(CompletionErrorException.class, () -> complete(p));
            assertArrayEquals(new byte[8], read(heapB, 8), "the flushed WRITE did not run");
        }
    }

    // ---- rings ----------------------------------------------------------------------------------------------------

    @Test
    void sendQueueAndSixteenBitCounterWrapAround() throws Exception {
        EmulatedNic threaded = new EmulatedNic(platform, new EmulatedNicConfig("backoff", true));
        try {
            NicMemory mem = threaded.registerMemory(new MemoryRegistration(null, heapA, REGION, MemoryKind.DEVICE,
                    NicAccess.HEAP, "A"));
            NicQp qp = threaded.createLoopbackQp(QpSpec.of(null, 16, "wrap"));
            HostPoster p = qp.hostPoster();
            int total = 70_000; // > 65,536 WQEs and > 4x the ring
            for (int i = 0; i < total; i++) {
                p.postFetchAdd(heapA + 256, mem.rkey(), 1, heapA + 512, mem.lkey(), TIMEOUT);
                if ((i & 7) == 7) {
                    p.ring();
                }
            }
            p.quiet(TIMEOUT);
            assertEquals(total, new Pointer(heapA + 256).getLong(0));
            assertEquals(total - 1, new Pointer(heapA + 512).getLong(0));
            assertEquals(total, threaded.stats().wqes());
        } finally {
            threaded.close();
        }
    }

    @Test
    void cqOverrunKillsTheQpLikeHardware() throws TimeoutException {
        try (QpPair qps = pair(16)) {
            QpRings r = qps.first().hostRings();
            ByteBuffer sq = new Pointer(r.sqBuf()).getByteBuffer(0, (long) r.sqWqebbs() * 64);
            ByteBuffer dbr = new Pointer(r.dbrec()).getByteBuffer(0, 8);
            ByteBuffer bell = new Pointer(r.doorbell()).getByteBuffer(0, 8);
            for (long i = 0; i < 40; i++) { // never consume a CQE, keep reusing slots
                WqeEncoder.writeNop(sq, i, r.qpn(), WqeDescriptor.FM_CE_SE_CQ_UPDATE);
                DoorbellRecordDescriptor.putSendCounterRelease(dbr, 0, i + 1);
                DoorbellDescriptor.putDoorbellRelease(bell, 0, i + 1, r.qpn());
                nic.engine().doWork();
            }
            assertEquals(QpState.ERROR, qps.first().state());
            assertTrue(nic.faults().stream().anyMatch(f -> f.contains("CQ overrun")), nic.faults().toString());
        }
    }
}
