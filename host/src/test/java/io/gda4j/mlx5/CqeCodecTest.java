package io.gda4j.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;

import org.junit.jupiter.api.Test;

/** CQE ownership across ring passes, error CQEs, the exception text, and the doorbell helpers. */
class CqeCodecTest {
    private static final int CQES = 4;

    private static ByteBuffer cq() {
        ByteBuffer cq = ByteBuffer.allocateDirect(CQES * CqeDescriptor.CQE_SIZE);
        CqeEncoder.initialize(cq);
        return cq;
    }

    @Test
    void freshQueueIsEmptyEverywhere() {
        ByteBuffer cq = cq();
        for (long n = 0; n < 3 * CQES; n++) {
            assertEquals(CqeDecoder.EMPTY, CqeDecoder.poll(cq, n));
        }
    }

    @Test
    void ownerBitFollowsTheRingPass() {
        ByteBuffer cq = cq();
        for (long n = 0; n < 3 * CQES; n++) {
            assertEquals(CqeDecoder.EMPTY, CqeDecoder.poll(cq, n), "not yet written at " + n);
            CqeEncoder.writeRequester(cq, n, 0x42, (int) n, Mlx5Opcode.RDMA_WRITE, 0);
            assertEquals(CqeOpcode.REQ, CqeDecoder.poll(cq, n));
            assertEquals((n / CQES) & 1, CqeDecoder.decode(cq, n).owner());
            assertEquals(CqeDecoder.EMPTY, CqeDecoder.poll(cq, n + CQES), "next pass must not see it");
        }
    }

    @Test
    void errorCqeBecomesAnExceptionThatSaysWhatToCheck() {
        ByteBuffer cq = cq();
        CqeEncoder.writeError(cq, 1, CqeOpcode.REQ_ERR, 0x12a, 42, Mlx5Opcode.RDMA_WRITE,
                CqeSyndrome.REMOTE_ACCESS.code(), 0x88);
        assertEquals(CqeOpcode.REQ_ERR, CqeDecoder.poll(cq, 1));
        DecodedCqe cqe = CqeDecoder.decode(cq, 1);
        CompletionErrorException e = assertThrows(CompletionErrorException.class, cqe::requireSuccess);
        assertEquals("RDMA completion error on QP 0x00012a, WQE index 42 (RDMA_WRITE): REMOTE_ACCESS (0x13),"
                + " vendor syndrome 0x88, REQ_ERR CQE. Usually: the rkey or remote address is wrong, or the remote"
                + " MR lacks the access right.", e.getMessage());
        assertEquals(0x12a, e.qpn());
        assertEquals(42, e.wqeIndex());
        assertEquals(Mlx5Opcode.RDMA_WRITE, e.wqeOpcode());
        assertSame(CqeSyndrome.REMOTE_ACCESS, e.syndrome());
    }

    @Test
    void unknownSyndromeStillGivesAMessage() {
        ByteBuffer cq = cq();
        CqeEncoder.writeError(cq, 0, CqeOpcode.RESP_ERR, 1, 0, 0x3f, 0x77, 0);
        CompletionErrorException e = new CompletionErrorException(CqeDecoder.decode(cq, 0));
        assertNull(e.syndrome());
        assertTrue(e.getMessage().contains("0x77 (unknown)"), e.getMessage());
        assertTrue(e.getMessage().contains("0x3f (unknown)"), e.getMessage());
    }

    @Test
    void successfulCqePassesThrough() {
        ByteBuffer cq = cq();
        CqeEncoder.writeRequester(cq, 0, 7, 9, Mlx5Opcode.RDMA_READ, 4096);
        DecodedCqe cqe = CqeDecoder.decode(cq, 0);
        assertSame(cqe, cqe.requireSuccess());
        assertEquals(4096, cqe.byteCount());
        assertEquals(0, cqe.syndrome());
    }

    @Test
    void writeErrorRefusesANonErrorOpcode() {
        assertThrows(IllegalArgumentException.class,
                () -> CqeEncoder.writeError(cq(), 0, CqeOpcode.REQ, 1, 0, 0, 0, 0));
    }

    @Test
    void everySyndromeHasAMeaningAndAUniqueCode() {
        for (CqeSyndrome syndrome : CqeSyndrome.values()) {
            assertSame(syndrome, CqeSyndrome.fromCode(syndrome.code()));
            assertTrue(syndrome.meaning().length() > 20, syndrome::name);
        }
        assertNull(CqeSyndrome.fromCode(-1));
        assertNull(CqeSyndrome.fromCode(0x100));
    }

    @Test
    void tailIsTheLastEightBytes() {
        ByteBuffer cq = cq();
        CqeEncoder.writeRequester(cq, 2, 0xabcdef, 0x1234, Mlx5Opcode.ATOMIC_FA, 8);
        long tail = CqeEncoder.tail(Mlx5Opcode.ATOMIC_FA, 0xabcdef, 0x1234,
                CqeDescriptor.opOwn(CqeOpcode.REQ, 0));
        assertEquals(0x12abcdef_12340000L, tail);
        assertEquals(tail, cq.getLong(2 * CqeDescriptor.CQE_SIZE + CqeDescriptor.TAIL_OFFSET));
    }

    /**
     * What the codecs promise, the same on every JDK: plain fields work on any buffer; the ordered words (CQE tail,
     * doorbell records) need a direct buffer, and a heap buffer is refused with a message that says so (JDK 22+ would
     * refuse it anyway, with "Atomic access not supported for heap buffer").
     */
    @Test
    void orderedWordsNeedADirectBufferOnEveryJdk() {
        ByteBuffer cq = ByteBuffer.allocate(CQES * CqeDescriptor.CQE_SIZE);
        CqeEncoder.initialize(cq);
        long tail = CqeEncoder.prepareRequester(cq, 0, 1, 2, Mlx5Opcode.RDMA_READ, 4096);
        assertEquals(4096, cq.getInt(CqeDescriptor.BYTE_CNT_OFFSET), "plain stores of the body work on the heap");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CqeDecoder.poll(cq, 0));
        assertTrue(e.getMessage().contains("direct buffer") && e.getMessage().contains("heap"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> CqeEncoder.publishTail(cq, 0, tail));
        assertThrows(IllegalArgumentException.class, () -> CqeEncoder.writeRequester(cq, 0, 1, 2, Mlx5Opcode.NOP, 0));
        ByteBuffer dbr = ByteBuffer.allocate(DoorbellRecordDescriptor.SIZE);
        assertThrows(IllegalArgumentException.class, () -> DoorbellRecordDescriptor.putSendCounterRelease(dbr, 0, 7));
        assertThrows(IllegalArgumentException.class, () -> DoorbellRecordDescriptor.getSendCounterAcquire(dbr, 0));

        ByteBuffer direct = cq();
        CqeEncoder.publishTail(direct, 0, CqeEncoder.prepareRequester(direct, 0, 1, 2, Mlx5Opcode.NOP, 0));
        assertEquals(CqeOpcode.REQ, CqeDecoder.poll(direct, 0));
    }

    @Test
    void doorbellAndDoorbellRecord() {
        assertEquals(0x00123400_abcdef00L, DoorbellDescriptor.doorbellBigEndian(0x1234, 0xabcdef));
        assertEquals(0x00000100_ffffff00L, DoorbellDescriptor.doorbellBigEndian(0x10001, 0xffffff));
        ByteBuffer dbr = ByteBuffer.allocateDirect(DoorbellRecordDescriptor.SIZE);
        DoorbellRecordDescriptor.putSendCounterRelease(dbr, 0, 0x2_fffe);
        assertEquals(0xfffe, DoorbellRecordDescriptor.getSendCounterAcquire(dbr, 0));
        assertEquals(0, dbr.getInt(DoorbellRecordDescriptor.RECEIVE_COUNTER_OFFSET));
        assertEquals(0x0000fffe, dbr.getInt(DoorbellRecordDescriptor.SEND_COUNTER_OFFSET));
    }
}
