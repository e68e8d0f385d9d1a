package io.gda4j.nic.emulated;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Pointer;

import io.gda4j.mlx5.CqeDecoder;
import io.gda4j.mlx5.CqeSyndrome;
import io.gda4j.mlx5.DecodedCqe;
import io.gda4j.mlx5.DoorbellDescriptor;
import io.gda4j.mlx5.DoorbellRecordDescriptor;
import io.gda4j.mlx5.Mlx5Opcode;
import io.gda4j.mlx5.WqeDescriptor;
import io.gda4j.mlx5.WqeEncoder;
import io.gda4j.nic.MemoryKind;
import io.gda4j.nic.MemoryRegistration;
import io.gda4j.nic.NicAccess;
import io.gda4j.nic.NicMemory;
import io.gda4j.nic.NicQp;
import io.gda4j.nic.QpPair;
import io.gda4j.nic.QpRings;
import io.gda4j.nic.QpSpec;
import io.gda4j.nic.QpState;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;

/**
 * The strict emulated NIC's RC protocol, as a ConnectX runs it: one key table per NIC (a key of another NIC fails),
 * QP states and their moves (a doorbell rung before RTS is dropped, never replayed; SQD holds new work; ERROR, RESET,
 * INIT, RTR, RTS recovers), transport retries (a peer that does not answer fails after the retry time, not at once),
 * a refused request moves the responder to ERROR too, and the QP's access flags and READ/atomic depths are checked.
 * Raw rings on host memory, the engine driven by hand.
 */
class EmulatedNicRcTest extends TwoHeapNicTest {
    static final int SQ = 64;
    static final int PASSES = 32;
    static final long DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(10);

    /** A strict NIC whose unanswered requests are retried for {@code retryNanos}. */
    void openStrict(long retryNanos) {
        open(new EmulatedNicConfig("backoff", false).withRetryNanos(retryNanos));
    }

    /** Raw access to one QP's rings; counts its WQEs and CQEs. */
    final class Raw {
        final NicQp qp;
        final QpRings r;
        final ByteBuffer sq;
        final ByteBuffer dbrec;
        final ByteBuffer doorbell;
        final ByteBuffer cq;
        long pi;
        int cqes;

        Raw(NicQp qp) {
            this.qp = qp;
            r = qp.hostRings();
            sq = new Pointer(r.sqBuf()).getByteBuffer(0, (long) r.sqWqebbs() * WqeDescriptor.WQEBB_SIZE);
            dbrec = new Pointer(r.dbrec()).getByteBuffer(0, DoorbellRecordDescriptor.SIZE);
            doorbell = new Pointer(r.doorbell()).getByteBuffer(0, DoorbellDescriptor.SIZE);
            cq = new Pointer(r.cqBuf()).getByteBuffer(0, (long) r.cqeCount() * 64);
        }

        /** An 8-byte WRITE from A[off] to {@code raddr} with {@code rkey}, rung at once. */
        void write(long off, long raddr, int rkey) {
            WqeEncoder.writeRdmaWrite(sq, pi, r.qpn(), WqeDescriptor.FM_CE_SE_CQ_UPDATE, raddr, rkey, heapA + off,
                    memA.lkey(), 8);
            ring(pi + 1);
        }

        void read(long raddr, int rkey, long off, int bytes) {
            WqeEncoder.writeRdmaRead(sq, pi, r.qpn(), WqeDescriptor.FM_CE_SE_CQ_UPDATE, raddr, rkey, heapA + off,
                    memA.lkey(), bytes);
            ring(pi + 1);
        }

        void nop() {
            WqeEncoder.writeNop(sq, pi, r.qpn(), WqeDescriptor.FM_CE_SE_CQ_UPDATE);
            ring(pi + 1);
        }

        void ring(long to) {
            pi = to;
            DoorbellRecordDescriptor.putSendCounterRelease(dbrec, 0, pi);
            DoorbellDescriptor.putDoorbellRelease(doorbell, 0, pi, r.qpn());
        }

        boolean hasCqe() {
            return CqeDecoder.poll(cq, cqes) != CqeDecoder.EMPTY;
        }

        /** The next CQE, running the engines until it comes (within a deadline). */
        DecodedCqe next(EmulatedNic... engines) {
            long deadline = System.nanoTime() + DEADLINE_NANOS;
            while (!hasCqe()) {
                assertTrue(System.nanoTime() < deadline, "no CQE on " + qp + " within 10 s; faults " + nic.faults());
                for (EmulatedNic n : engines) {
                    n.engine().doWork();
                }
            }
            return CqeDecoder.decode(cq, cqes++);
        }
    }

    void run(EmulatedNic... nics) {
        for (int i = 0; i < PASSES; i++) {
            for (EmulatedNic n : nics) {
                n.engine().doWork();
            }
        }
    }

    // ---- states --------------------------------------------------------------------------------------------------

    @Test
    void aDoorbellRungBeforeRtsIsDroppedAndNeverReplayed() {
        openStrict(0);
        for (QpState before : new QpState[] {QpState.RESET, QpState.INIT}) {
            EmulatedQp a = (EmulatedQp) nic.createQp(QpSpec.of(null, SQ, "a->b"));
            EmulatedQp b = (EmulatedQp) nic.createQp(QpSpec.of(null, SQ, "b->a"));
            try {
                if (before == QpState.INIT) {
                    a.modify(QpState.INIT);
                }
                new Pointer(heapA).setLong(0, 0x5a5a);
                Raw raw = new Raw(a);
                raw.write(0, heapB, memB.rkey());
                run(nic);
                if (before == QpState.INIT) {
                    a.toRtr(b.address());
                    a.modify(QpState.RTS);
                } else {
                    a.connect(b.address());
                }
                b.connect(a.address());
                run(nic);
                assertEquals(0, new Pointer(heapB).getLong(0), "a doorbell rung in " + before + " ran after connect");
                assertTrue(!raw.hasCqe(), "no CQE for a dropped doorbell");
                assertTrue(nic.engine().droppedDoorbells() > 0);
                raw.ring(1); // rung again, now in RTS: the same word is a new doorbell and runs the WQE
                DecodedCqe cqe = raw.next(nic);
                cqe.requireSuccess();
                assertEquals(0x5a5a, new Pointer(heapB).getLong(0));
                new Pointer(heapB).setLong(0, 0);
            } finally {
                a.close();
                b.close();
            }
        }
    }

    @Test
    void onlyTheMovesVerbsAllowsAreTaken() {
        openStrict(0);
        EmulatedQp a = (EmulatedQp) nic.createQp(QpSpec.of(null, SQ, "a"));
        try {
            assertThrows(IllegalStateException.class, () -> a.modify(QpState.RTS), "RESET -> RTS");
            assertThrows(IllegalStateException.class, () -> a.modify(QpState.SQD), "RESET -> SQD");
            a.modify(QpState.INIT);
            assertThrows(IllegalStateException.class, () -> a.modify(QpState.RTS), "INIT -> RTS skips RTR");
            assertThrows(IllegalStateException.class, () -> a.modify(QpState.RTR), "RTR needs the peer");
            a.toRtr(a.address());
            assertEquals(QpState.RTR, a.state());
            assertThrows(IllegalStateException.class, () -> a.modify(QpState.SQD), "RTR -> SQD");
            a.modify(QpState.RTS);
            a.modify(QpState.SQD);
            a.modify(QpState.RTS);
            a.modify(QpState.ERROR);
            assertThrows(IllegalStateException.class, () -> a.modify(QpState.RTS), "ERROR -> RTS without a reset");
            assertThrows(IllegalStateException.class, () -> a.modify(QpState.INIT), "ERROR -> INIT");
            a.modify(QpState.RESET);
            assertEquals(QpState.RESET, a.state());
        } finally {
            a.close();
        }
    }

    @Test
    void sqdTakesDoorbellsButStartsNothingUntilRts() {
        openStrict(0);
        try (QpPair qps = pair(SQ)) {
            EmulatedQp a = (EmulatedQp) qps.first();
            new Pointer(heapA).setLong(0, 77);
            a.modify(QpState.SQD);
            Raw raw = new Raw(a);
            raw.write(0, heapB, memB.rkey());
            run(nic);
            assertEquals(0, new Pointer(heapB).getLong(0), "nothing starts in SQD");
            a.modify(QpState.RTS);
            raw.next(nic).requireSuccess();
            assertEquals(77, new Pointer(heapB).getLong(0), "the doorbell taken in SQD runs in RTS");
        }
    }

    @Test
    void aQpInErrorRecoversThroughResetInitRtrRts() {
        openStrict(0);
        try (QpPair qps = pair(SQ)) {
            EmulatedQp a = (EmulatedQp) qps.first();
            EmulatedQp b = (EmulatedQp) qps.second();
            Raw raw = new Raw(a);
            raw.write(0, heapB, 0x777); // no such rkey
            DecodedCqe error = raw.next(nic);
            assertEquals(CqeSyndrome.REMOTE_ACCESS.code(), error.syndrome(), error.toString());
            assertEquals(QpState.ERROR, a.state());
            for (EmulatedQp q : new EmulatedQp[] {a, b}) {
                q.modify(QpState.RESET);
                q.modify(QpState.INIT);
            }
            a.toRtr(b.address());
            b.toRtr(a.address());
            a.modify(QpState.RTS);
            b.modify(QpState.RTS);
            new Pointer(heapA).setLong(0, 1234);
            raw.pi = 0; // after a reset the send queue starts again at producer index 0
            raw.write(0, heapB, memB.rkey());
            DecodedCqe ok = raw.next(nic);
            ok.requireSuccess();
            assertEquals(0, ok.wqeCounter(), ok.toString());
            assertEquals(1234, new Pointer(heapB).getLong(0));
        }
    }

    // ---- retries and the responder -------------------------------------------------------------------------------

    @Test
    void anUnansweredRequestIsRetriedNotFailedAtOnceAndReachesAPeerThatComesUp() {
        openStrict(TimeUnit.HOURS.toNanos(1));
        try (QpPair qps = pair(SQ)) {
            EmulatedQp a = (EmulatedQp) qps.first();
            EmulatedQp b = (EmulatedQp) qps.second();
            b.modify(QpState.RESET); // b drops what a sends
            new Pointer(heapA).setLong(0, 99);
            Raw raw = new Raw(a);
            raw.write(0, heapB, memB.rkey());
            raw.nop();
            run(nic);
            assertTrue(!raw.hasCqe(), "the WQE is retried (seconds on hardware), not failed at once");
            assertEquals(QpState.RTS, a.state());
            b.connect(a.address());
            raw.next(nic).requireSuccess();
            raw.next(nic).requireSuccess();
            assertEquals(99, new Pointer(heapB).getLong(0), "the peer came up within the retry time");
        }
    }

    @Test
    void anUnansweredRequestFailsWithRetryExceededAfterTheRetryTime() {
        openStrict(TimeUnit.MILLISECONDS.toNanos(1));
        try (QpPair qps = pair(SQ)) {
            qps.second().close();
            Raw raw = new Raw(qps.first());
            raw.write(0, heapB, memB.rkey());
            DecodedCqe cqe = raw.next(nic);
            assertEquals(CqeSyndrome.TRANSPORT_RETRY_EXC.code(), cqe.syndrome(), cqe.toString());
            assertTrue(nic.faults().get(nic.faults().size() - 1).contains("retried for"), nic.faults().toString());
        }
    }

    @Test
    void aPeerConnectedToAnotherQpDropsTheRequests() {
        openStrict(0);
        NicQp a = nic.createQp(QpSpec.of(null, SQ, "a"));
        NicQp b = nic.createQp(QpSpec.of(null, SQ, "b"));
        NicQp c = nic.createQp(QpSpec.of(null, SQ, "c"));
        try {
            a.connect(b.address());
            b.connect(c.address());
            c.connect(b.address());
            Raw raw = new Raw(a);
            raw.write(0, heapB, memB.rkey());
            DecodedCqe cqe = raw.next(nic);
            assertEquals(CqeSyndrome.TRANSPORT_RETRY_EXC.code(), cqe.syndrome(), cqe.toString());
            assertEquals(0, new Pointer(heapB).getLong(0));
        } finally {
            c.close();
            b.close();
            a.close();
        }
    }

    @Test
    void aRequestTheResponderRefusesMovesTheResponderToErrorToo() {
        openStrict(0);
        try (QpPair qps = pair(SQ)) {
            Raw a = new Raw(qps.first());
            a.write(0, heapB + REGION - 4, memB.rkey()); // past the end of B
            DecodedCqe cqe = a.next(nic);
            assertEquals(CqeSyndrome.REMOTE_ACCESS.code(), cqe.syndrome(), cqe.toString());
            assertEquals(QpState.ERROR, qps.second().state(), "the responder NAKed and went to ERROR");
            Raw b = new Raw(qps.second());
            b.nop();
            DecodedCqe flushed = b.next(nic);
            assertEquals(CqeSyndrome.WR_FLUSH.code(), flushed.syndrome(), "the responder's own work is flushed: "
                    + flushed);
        }
    }

    @Test
    void theResponderQpsAccessFlagsAreChecked() {
        openStrict(0);
        QpSpec readOnly = QpSpec.of(null, SQ, "b->a").withRemote(EnumSet.of(NicAccess.REMOTE_READ), 16, 16);
        try (QpPair qps = QpPair.connect(nic, QpSpec.of(null, SQ, "a->b"), nic, readOnly)) {
            Raw a = new Raw(qps.first());
            a.read(heapB, memB.rkey(), 64, 8);
            a.next(nic).requireSuccess();
            a.write(0, heapB, memB.rkey()); // the region allows it, the QP does not
            DecodedCqe cqe = a.next(nic);
            assertEquals(CqeSyndrome.REMOTE_INVAL_REQ.code(), cqe.syndrome(), cqe.toString());
            assertEquals(EmulatedFault.QP_NO_ACCESS.vendorSyndrome(), cqe.vendorSyndrome());
        }
    }

    @Test
    void moreReadsInFlightThanTheResponderTakesAreRefused() {
        openStrict(0);
        QpSpec deep = QpSpec.of(null, SQ, "a->b").withRemote(QpSpec.DEFAULT_REMOTE_ACCESS, 4, 16);
        QpSpec shallow = QpSpec.of(null, SQ, "b->a").withRemote(QpSpec.DEFAULT_REMOTE_ACCESS, 16, 1);
        try (QpPair qps = QpPair.connect(nic, deep, nic, shallow)) {
            Raw a = new Raw(qps.first());
            a.read(heapB, memB.rkey(), 0, 8);
            a.read(heapB + 8, memB.rkey(), 8, 8); // the first has not come back: two in flight, b takes one
            a.next(nic).requireSuccess();
            DecodedCqe cqe = a.next(nic);
            assertEquals(CqeSyndrome.REMOTE_INVAL_REQ.code(), cqe.syndrome(), cqe.toString());
            assertEquals(EmulatedFault.RD_ATOMIC_EXCEEDED.vendorSyndrome(), cqe.vendorSyndrome());
        }
        QpSpec one = QpSpec.of(null, SQ, "c->d").withRemote(QpSpec.DEFAULT_REMOTE_ACCESS, 1, 16);
        QpSpec takesOne = QpSpec.of(null, SQ, "d->c").withRemote(QpSpec.DEFAULT_REMOTE_ACCESS, 16, 1);
        try (QpPair qps = QpPair.connect(nic, one, nic, takesOne)) {
            Raw c = new Raw(qps.first());
            for (int i = 0; i < 3; i++) {
                c.read(heapB + 8 * i, memB.rkey(), 8 * i, 8); // max_rd_atomic 1: each waits for the one before
            }
            for (int i = 0; i < 3; i++) {
                c.next(nic).requireSuccess();
            }
        }
    }

    // ---- one NIC, one key table ----------------------------------------------------------------------------------

    @Test
    void qpsOfTwoNicsConnectAndTheResponderNicsKeysRule() {
        openStrict(0);
        EmulatedNic other = new EmulatedNic(platform, new EmulatedNicConfig("backoff", false).withRetryNanos(0));
        try {
            NicMemory onOther = other.registerMemory(new MemoryRegistration(null, heapB, REGION, MemoryKind.DEVICE,
                    NicAccess.HEAP, "B on the other NIC"));
            assertNotEquals(memB.rkey(), onOther.rkey(), "each NIC makes its own keys");
            try (QpPair qps = QpPair.connect(nic, QpSpec.of(null, SQ, "a->b"), other, QpSpec.of(null, SQ, "b->a"))) {
                Raw a = new Raw(qps.first());
                new Pointer(heapA).setLong(0, 4242);
                a.write(0, heapB, onOther.rkey());
                a.next(nic, other).requireSuccess();
                assertEquals(4242, new Pointer(heapB).getLong(0), "the responder NIC's rkey reaches its memory");
                new Pointer(heapA).setLong(8, 1);
                a.write(8, heapB + 8, memB.rkey()); // B registered on the requester's NIC: the wrong one
                DecodedCqe cqe = a.next(nic, other);
                assertEquals(CqeSyndrome.REMOTE_ACCESS.code(), cqe.syndrome(), "a key of the requester's NIC means"
                        + " nothing to the responder's: " + cqe);
                assertEquals(0, new Pointer(heapB + 8).getLong(0));
            }
            try (QpPair qps = QpPair.connect(nic, QpSpec.of(null, SQ, "a->b"), other, QpSpec.of(null, SQ, "b->a"))) {
                Raw a = new Raw(qps.first());
                WqeEncoder.writeRdmaWrite(a.sq, 0, a.r.qpn(), WqeDescriptor.FM_CE_SE_CQ_UPDATE, heapB, onOther.rkey(),
                        heapB, onOther.lkey(), 8); // a local key of the other NIC
                a.ring(1);
                DecodedCqe cqe = a.next(nic, other);
                assertEquals(CqeSyndrome.LOCAL_PROT.code(), cqe.syndrome(), cqe.toString());
                assertEquals(Mlx5Opcode.RDMA_WRITE, cqe.wqeOpcode());
            }
        } finally {
            other.close();
        }
    }

    @Test
    void retryTimeIsASetting() {
        java.util.Properties props = new java.util.Properties();
        props.setProperty(EmulatedNicConfig.RETRY_PROP_NAME, "3");
        assertEquals(TimeUnit.MILLISECONDS.toNanos(3), EmulatedNicConfig.resolve(props, java.util.Map.of())
                .retryNanos());
        assertEquals(TimeUnit.MILLISECONDS.toNanos(537), EmulatedNicConfig.resolve(new java.util.Properties(),
                java.util.Map.of()).retryNanos());
        props.setProperty(EmulatedNicConfig.RETRY_PROP_NAME, "-1");
        assertThrows(IllegalArgumentException.class, () -> EmulatedNicConfig.resolve(props, java.util.Map.of()));
        assertTrue(EmulatedNicConfig.SETTINGS.contains(EmulatedNicConfig.RETRY));
        assertArrayEquals(new byte[0], new byte[0]);
    }
}
