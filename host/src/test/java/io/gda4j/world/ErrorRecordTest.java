package io.gda4j.world;

import io.gda4j.moe.MoeErrorDecoder;
import io.gda4j.p2p.P2pErrorDecoder;
import io.gda4j.transport.Transport;
import io.gda4j.world.ErrorRecordDescriptor.Code;
import io.gda4j.world.ErrorRecordDescriptor.Op;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ErrorRecordTest {
    static ByteBuffer record(int code, Op op, long offset, long expected, long seen, Cmp cmp) {
        ByteBuffer b = ByteBuffer.allocate(ErrorRecordDescriptor.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(ErrorRecordDescriptor.CODE_OFFSET, code);
        b.putInt(ErrorRecordDescriptor.RANK_OFFSET, 1);
        b.putInt(ErrorRecordDescriptor.PEER_OFFSET, 0);
        b.putInt(ErrorRecordDescriptor.OP_OFFSET, op.value());
        b.putLong(ErrorRecordDescriptor.OFFSET_OFFSET, offset);
        b.putLong(ErrorRecordDescriptor.EXPECTED_OFFSET, expected);
        b.putLong(ErrorRecordDescriptor.SEEN_OFFSET, seen);
        b.putLong(ErrorRecordDescriptor.ELAPSED_NS_OFFSET, 100_000_000L);
        b.putInt(ErrorRecordDescriptor.BLOCK_OFFSET, 3);
        b.putInt(ErrorRecordDescriptor.THREAD_OFFSET, 7);
        b.putInt(ErrorRecordDescriptor.CMP_OFFSET, cmp.code());
        return b;
    }

    @Test
    void timeoutRecordSaysWhatWasAwaited() {
        ErrorRecord r = ErrorRecord.decode(record(Code.WAIT_TIMEOUT.value(), Op.WAIT_UNTIL, 0x40, 5, 3, Cmp.GE));
        assertTrue(r.isError());
        assertEquals(1, r.rank());
        assertEquals(3, r.block());
        assertEquals(7, r.thread());
        String m = r.describe(Duration.ofMillis(100));
        assertTrue(m.contains("rank 1, wait_until"), m);
        assertTrue(m.contains("0x40"), m);
        assertTrue(m.contains("was 3, waiting for >= 5"), m);
        assertTrue(m.contains("0.100 s"), m);
        assertTrue(m.contains(WorldConfig.WAIT_TIMEOUT_ENV), m);
    }

    @Test
    void outOfRangeRecordNamesTheHeap() {
        ErrorRecord r = ErrorRecord.decode(record(Code.OUT_OF_RANGE.value(), Op.PUT, 4096, 64, 4096, Cmp.EQ));
        String m = r.describe(Duration.ofSeconds(1));
        assertTrue(m.contains("rank 1, put to peer 0 (block 3, thread 7)"), m);
        assertTrue(m.contains("outside the symmetric heap of 4096 bytes"), m);
    }

    @Test
    void noNativeAtomicsRecordSaysWhatToDoInstead() {
        ErrorRecord r = ErrorRecord.decode(record(P2pErrorDecoder.NO_NATIVE_ATOMICS, Op.SIGNAL, 0x80, 1, 0, Cmp.EQ));
        String m = r.describe(Duration.ofSeconds(1));
        assertTrue(m.contains("p2p link to rank 0 has no native atomics"), m);
        assertTrue(m.contains("NATIVE_ATOMIC_SUPPORTED") && m.contains("SignalOp.SET") && m.contains("GDA4J_TRANSPORT"),
                m);
    }

    @Test
    void mixedAtomicsRecordStatesTheRuleAndTheWayOut() {
        ByteBuffer b = record(Code.MIXED_ATOMICS.value(), Op.ATOMIC_ADD, 0x80, 1, 0, Cmp.EQ);
        b.putInt(ErrorRecordDescriptor.CMP_OFFSET, Transport.PROXY.code());
        String m = ErrorRecord.decode(b).describe(Duration.ofSeconds(1));
        assertTrue(m.contains("rank 0 has IBGDA links") && m.contains("over the proxy"), m);
        assertTrue(m.contains("GDA4J_TRANSPORT=ibgda") && m.contains("SignalOp.SET"), m);
    }

    @Test
    void mixedAtomicsRecordNamesThePathByItsTag() {
        ByteBuffer b = record(Code.MIXED_ATOMICS.value(), Op.SIGNAL, 0x80, 1, 0, Cmp.EQ);
        b.putInt(ErrorRecordDescriptor.CMP_OFFSET, Transport.P2P.code());
        String m = ErrorRecord.decode(b).describe(Duration.ofSeconds(1));
        assertTrue(m.contains("a GPU atomic add over p2p would not be atomic"), m);
        b.putInt(ErrorRecordDescriptor.CMP_OFFSET, 77);
        m = ErrorRecord.decode(b).describe(Duration.ofSeconds(1));
        assertTrue(m.contains("a GPU atomic add over transport code 77 would not be atomic"), m);
    }

    @Test
    void unsupportedTransportRecordNamesTheTransportInLowerCase() {
        String m = ErrorRecord.decode(record(Code.UNSUPPORTED_TRANSPORT.value(), Op.PUT_INLINE, 0x80, 0,
                Transport.IBGDA.code(), Cmp.EQ)).describe(Duration.ofSeconds(1));
        assertTrue(m.contains("that peer's transport is ibgda, and put_inline needs direct stores"), m);
        m = ErrorRecord.decode(record(Code.UNSUPPORTED_TRANSPORT.value(), Op.GET, 0x80, 0, Transport.PROXY.code(), Cmp.EQ))
                .describe(Duration.ofSeconds(1));
        assertTrue(m.contains("that peer's transport is proxy, which this kernel's device API"), m);
        m = ErrorRecord.decode(record(Code.UNSUPPORTED_TRANSPORT.value(), Op.GET, 0x80, 0, 77, Cmp.EQ))
                .describe(Duration.ofSeconds(1));
        assertTrue(m.contains("that peer's transport is code 77,"), m);
    }

    @Test
    void mixedCombineInputsNameBothSidesAndTheRule() {
        // Rank 1's 5th combine pulled from its heap (5 << 1 | 1), rank 0 pushed from a tensor of its own (5 << 1).
        String m = ErrorRecord.decode(record(MoeErrorDecoder.COMBINE_INPUT_MIXED, Op.WAIT_UNTIL, 0x80, 11, 10, Cmp.GE))
                .describe(Duration.ofSeconds(1));
        assertTrue(m.contains("combine 5 read its expert outputs from its heap's combine input"), m);
        assertTrue(m.contains("rank 0's from a tensor of its own") && m.contains("MoeRank.combineInput()")
                && m.contains("MoeLowLatencyDispatch.combineInput()"), m);
    }

    @Test
    void emptyRecordIsNoError() {
        ErrorRecord r = ErrorRecord.decode(ByteBuffer.allocate(64));
        assertFalse(r.isError());
    }
}
