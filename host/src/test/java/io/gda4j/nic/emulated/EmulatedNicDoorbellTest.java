package io.gda4j.nic.emulated;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Pointer;

import io.gda4j.mlx5.CqDoorbellRecordDescriptor;
import io.gda4j.mlx5.CqeDecoder;
import io.gda4j.mlx5.CqeSyndrome;
import io.gda4j.mlx5.DecodedCqe;
import io.gda4j.mlx5.DoorbellDescriptor;
import io.gda4j.mlx5.DoorbellRecordDescriptor;
import io.gda4j.mlx5.WqeDescriptor;
import io.gda4j.mlx5.WqeEncoder;
import io.gda4j.nic.HostPoster;
import io.gda4j.nic.MemoryKind;
import io.gda4j.nic.MemoryRegistration;
import io.gda4j.nic.NicAccess;
import io.gda4j.nic.NicMemory;
import io.gda4j.nic.QpPair;
import io.gda4j.nic.QpRings;
import io.gda4j.nic.QpSpec;
import io.gda4j.nic.QpState;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The emulated NIC acts on the doorbell, as a ConnectX does, and checks it: a doorbell record stored without a
 * doorbell runs nothing, a stale doorbell runs only what it names, and a doorbell for another QP, in the wrong byte
 * order, behind the last one or past the send queue, ahead of the doorbell record, or rung before its WQE was
 * written, fails the QP with an error CQE. Raw rings on host memory, so each mistake is made exactly once.
 */
class EmulatedNicDoorbellTest extends TwoHeapNicTest {
    static final int SQ = 64;
    static final int PASSES = 16;

    QpPair qps;
    QpRings r;
    ByteBuffer sq;
    ByteBuffer dbrec;
    ByteBuffer doorbell;
    ByteBuffer cq;

    @BeforeEach
    void open() {
        open(new EmulatedNicConfig("backoff", false));
        qps = pair(SQ);
        r = qps.first().hostRings();
        sq = new Pointer(r.sqBuf()).getByteBuffer(0, (long) r.sqWqebbs() * WqeDescriptor.WQEBB_SIZE);
        dbrec = new Pointer(r.dbrec()).getByteBuffer(0, DoorbellRecordDescriptor.SIZE);
        doorbell = new Pointer(r.doorbell()).getByteBuffer(0, DoorbellDescriptor.SIZE);
        cq = new Pointer(r.cqBuf()).getByteBuffer(0, (long) r.cqeCount() * 64);
    }

    /** Runs before the base class closes the NIC (JUnit runs a subclass's @AfterEach first). */
    @AfterEach
    void closeQps() {
        if (qps != null) {
            qps.close();
        }
    }

    /** WRITE {@code i} copies 8 bytes of value i + 1 from A[8i] to B[8i]. */
    void writeWqe(long i) {
        new Pointer(heapA + 8 * i).setLong(0, i + 1);
        WqeEncoder.writeRdmaWrite(sq, i, r.qpn(), WqeDescriptor.FM_CE_SE_CQ_UPDATE, heapB + 8 * i, memB.rkey(),
                heapA + 8 * i, memA.lkey(), 8);
    }

    void record(long pi) {
        DoorbellRecordDescriptor.putSendCounterRelease(dbrec, 0, pi);
    }

    void ring(long pi) {
        DoorbellDescriptor.putDoorbellRelease(doorbell, 0, pi, r.qpn());
    }

    int run() {
        int cqes = 0;
        for (int i = 0; i < PASSES; i++) {
            nic.engine().doWork();
        }
        while (cqes < r.cqeCount() && CqeDecoder.poll(cq, cqes) != CqeDecoder.EMPTY) {
            cqes++;
        }
        return cqes;
    }

    long landed(long i) {
        return new Pointer(heapB + 8 * i).getLong(0);
    }

    /** One error CQE for the QP's next WQE ({@code at}), with the fault's syndromes, and the QP in error. */
    void assertDoorbellFault(EmulatedFault why, long at) {
        assertEquals(1, run(), "one error CQE");
        DecodedCqe cqe = CqeDecoder.decode(cq, 0);
        assertTrue(cqe.isError(), cqe.toString());
        assertEquals(CqeSyndrome.LOCAL_QP_OP.code(), cqe.syndrome(), cqe.toString());
        assertEquals(why.vendorSyndrome(), cqe.vendorSyndrome(), cqe + " " + nic.faults());
        assertEquals(at, cqe.wqeCounter(), cqe.toString());
        assertEquals(QpState.ERROR, qps.first().state());
        assertTrue(nic.faults().stream().anyMatch(f -> f.contains(why.description())), nic.faults().toString());
    }

    @Test
    void aDoorbellRecordWithoutADoorbellRunsNothing() {
        writeWqe(0);
        record(1);
        assertEquals(0, run(), "no CQE: the NIC acts on the doorbell, not on the doorbell record");
        assertEquals(0, landed(0), "the WRITE did not run");
        ring(1);
        assertEquals(1, run());
        CqeDecoder.decode(cq, 0).requireSuccess();
        assertEquals(1, landed(0));
    }

    @Test
    void aStaleDoorbellRunsOnlyTheWqesItNames() {
        writeWqe(0);
        writeWqe(1);
        writeWqe(2);
        record(3);
        ring(1);
        assertEquals(1, run(), "the doorbell names one WQE");
        assertEquals(0, landed(1), "the second WRITE waits for a doorbell");
        ring(3);
        assertEquals(3, run());
        assertEquals(3, landed(2));
    }

    @Test
    void aDoorbellOfAnotherQpFailsTheQp() {
        writeWqe(0);
        record(1);
        DoorbellDescriptor.putDoorbellRelease(doorbell, 0, 1, r.qpn() + 1);
        assertDoorbellFault(EmulatedFault.DOORBELL_MALFORMED, 0);
        assertEquals(0, landed(0), "nothing ran");
    }

    @Test
    void aLittleEndianDoorbellFailsTheQp() {
        writeWqe(0);
        writeWqe(1);
        record(2);
        // pi 2 (pi 1 with QP 0x100 reads the same both ways round)
        doorbell.order(ByteOrder.LITTLE_ENDIAN).putLong(0, DoorbellDescriptor.doorbellBigEndian(2, r.qpn()));
        assertDoorbellFault(EmulatedFault.DOORBELL_MALFORMED, 0);
    }

    @Test
    void aDoorbellWithOpcodeOrDsBitsFailsTheQp() {
        writeWqe(0);
        record(1);
        long bell = DoorbellDescriptor.doorbellBigEndian(1, r.qpn()) | (long) WqeDescriptor.RDMA_DS;
        doorbell.order(ByteOrder.BIG_ENDIAN).putLong(0, bell);
        assertDoorbellFault(EmulatedFault.DOORBELL_MALFORMED, 0);
    }

    @Test
    void aDoorbellAheadOfTheDoorbellRecordFailsTheQp() {
        writeWqe(0);
        writeWqe(1);
        record(1);
        ring(2);
        assertDoorbellFault(EmulatedFault.DOORBELL_AHEAD_OF_RECORD, 0);
        assertEquals(0, landed(0), "nothing ran");
    }

    @Test
    void aDoorbellThatGoesBackwardsFailsTheQp() {
        writeWqe(0);
        writeWqe(1);
        record(2);
        ring(2);
        assertEquals(2, run());
        ring(1);
        for (int i = 0; i < PASSES; i++) {
            nic.engine().doWork();
        }
        DecodedCqe cqe = CqeDecoder.decode(cq, 2);
        assertTrue(cqe.isError(), cqe.toString());
        assertEquals(EmulatedFault.DOORBELL_OUT_OF_RANGE.vendorSyndrome(), cqe.vendorSyndrome(), cqe.toString());
        assertEquals(QpState.ERROR, qps.first().state());
    }

    @Test
    void aDoorbellPastTheSendQueueFailsTheQp() {
        writeWqe(0);
        record(SQ + 1);
        ring(SQ + 1);
        assertDoorbellFault(EmulatedFault.DOORBELL_OUT_OF_RANGE, 0);
    }

    @Test
    void aDoorbellRungBeforeItsWqeWasWrittenFailsTheQp() {
        record(1);
        ring(1); // slot 0 still zeros: no WQE of this QP at this index
        assertEquals(1, run());
        DecodedCqe cqe = CqeDecoder.decode(cq, 0);
        assertTrue(cqe.isError(), cqe.toString());
        assertEquals(CqeSyndrome.LOCAL_QP_OP.code(), cqe.syndrome(), cqe.toString());
        writeWqe(0);
        run();
        assertEquals(0, landed(0), "the WQE written after its doorbell never runs");
    }

    @Test
    void aDoorbellRungBeforeItsWqeOnTheSecondLapFindsTheOldWqe() {
        for (long i = 0; i < SQ; i++) {
            writeWqe(i);
        }
        record(SQ);
        ring(SQ);
        assertEquals(SQ, run());
        dbrecConsumed(SQ);
        record(SQ + 1);
        ring(SQ + 1); // slot 0 still holds WQE 0 (index 0, not 64)
        for (int i = 0; i < PASSES; i++) {
            nic.engine().doWork();
        }
        DecodedCqe cqe = CqeDecoder.decode(cq, SQ);
        assertTrue(cqe.isError(), cqe.toString());
        assertEquals(CqeSyndrome.LOCAL_QP_OP.code(), cqe.syndrome(), cqe.toString());
        assertTrue(nic.faults().stream().anyMatch(f -> f.contains("WQE index")), nic.faults().toString());
    }

    /** Publishes the CQ consumer index, so the engine may reuse CQE slots. */
    void dbrecConsumed(long ci) {
        CqDoorbellRecordDescriptor.putConsumerIndexRelease(
                new Pointer(r.cqDbrec()).getByteBuffer(0, 8), 0, ci);
    }

    @Test
    void theHostPosterRingsADoorbellTheEngineAccepts() throws Exception {
        HostPoster p = qps.first().hostPoster();
        new Pointer(heapA).setLong(0, 77);
        p.postWrite(heapB, memB.rkey(), heapA, memA.lkey(), 8, 10_000_000_000L);
        p.ring();
        while (p.retiredIndex() < p.producerIndex()) {
            nic.engine().doWork();
            p.poll();
        }
        assertArrayEquals(new Pointer(heapA).getByteArray(0, 8), new Pointer(heapB).getByteArray(0, 8));
    }
}
