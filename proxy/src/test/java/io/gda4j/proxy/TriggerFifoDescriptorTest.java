package io.gda4j.proxy;

import static io.gda4j.proxy.TriggerFifoDescriptor.FIELD_LIMIT;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_ATOMIC_ADD;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_FLUSH;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_NOP;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_PUT;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_PUT_SIGNAL;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_SIGNAL;
import static io.gda4j.proxy.TriggerFifoDescriptor.LAP_MASK;
import static io.gda4j.proxy.TriggerFifoDescriptor.MEMORY_HEAP;
import static io.gda4j.proxy.TriggerFifoDescriptor.SIGNAL_OP_ADD;
import static io.gda4j.proxy.TriggerFifoDescriptor.SIGNAL_OP_SET;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

/** Trigger words: every field survives encode then decode, lap bits stay out of the fields, ranges are checked. */
class TriggerFifoDescriptorTest {
    static final long MAX = FIELD_LIMIT - 1;

    @Test
    void putFieldsRoundTripAtTheirLimitsAndAtRandom() {
        long[][] cases = {{0, 0, 0}, {MAX, MAX, MAX}, {1, 2, 3}, {MAX, 0, 1L << 22}, {0, MAX, (1L << 22) - 1},
            {0x1234_5678L, 0x9_8765_4321L, 0x3f_ffff_ffffL}};
        for (long[] c : cases) {
            checkPut(c[0], c[1], c[2], 0, 0);
        }
        SplittableRandom rnd = new SplittableRandom(7);
        for (int i = 0; i < 100_000; i++) {
            checkPut(rnd.nextLong(FIELD_LIMIT), rnd.nextLong(FIELD_LIMIT), rnd.nextLong(FIELD_LIMIT), rnd.nextInt(4),
                    rnd.nextInt(4));
        }
    }

    private static void checkPut(long dst, long src, long size, int dstMem, int srcMem) {
        assertTrue(TriggerFifoDescriptor.putFits(dst, src, size, dstMem, srcMem));
        for (int kind : new int[] {KIND_PUT, KIND_PUT_SIGNAL}) {
            long w0 = TriggerFifoDescriptor.putWord0(kind, dst, size);
            long w1 = TriggerFifoDescriptor.putWord1(src, size, dstMem, srcMem);
            assertEquals(0, (w0 | w1) & LAP_MASK, "a field reached the lap bit");
            for (long lap : new long[] {0, LAP_MASK}) {
                long a = w0 | lap;
                long b = w1 | lap;
                assertEquals(kind, TriggerFifoDescriptor.kind(a));
                assertEquals(dst, TriggerFifoDescriptor.dstOffset(a));
                assertEquals(src, TriggerFifoDescriptor.srcOffset(b));
                assertEquals(size, TriggerFifoDescriptor.sizeBytes(a, b));
                assertEquals(dstMem, TriggerFifoDescriptor.dstMemory(b));
                assertEquals(srcMem, TriggerFifoDescriptor.srcMemory(b));
            }
        }
    }

    @Test
    void signalFieldsRoundTripWithAll64BitsOfTheValue() {
        long[] values = {0, 1, -1, Long.MIN_VALUE, Long.MAX_VALUE, 0x8000_0000_0000_0001L, 123_456_789_012L};
        SplittableRandom rnd = new SplittableRandom(11);
        for (int i = 0; i < 50_000; i++) {
            long value = i < values.length ? values[i] : rnd.nextLong();
            long word = rnd.nextLong(FIELD_LIMIT) & ~7L;
            int op = rnd.nextInt(2);
            int kind = rnd.nextBoolean() ? KIND_SIGNAL : KIND_ATOMIC_ADD;
            int mem = rnd.nextInt(4);
            assertTrue(TriggerFifoDescriptor.signalFits(word, op, mem));
            long w0 = TriggerFifoDescriptor.signalWord0(kind, op, word, value, mem) | LAP_MASK;
            long w1 = TriggerFifoDescriptor.signalWord1(value) | LAP_MASK;
            assertEquals(kind, TriggerFifoDescriptor.kind(w0));
            assertEquals(op, TriggerFifoDescriptor.signalOp(w0));
            assertEquals(word, TriggerFifoDescriptor.wordOffset(w0));
            assertEquals(mem, TriggerFifoDescriptor.signalMemory(w0));
            assertEquals(value, TriggerFifoDescriptor.signalValue(w0, w1), "value " + Long.toHexString(value));
        }
    }

    @Test
    void controlTriggersCarryOnlyTheirKindAndCookie() {
        assertEquals(KIND_FLUSH, TriggerFifoDescriptor.kind(TriggerFifoDescriptor.controlWord0(KIND_FLUSH)));
        assertEquals(KIND_NOP, TriggerFifoDescriptor.kind(TriggerFifoDescriptor.controlWord0(KIND_NOP)));
        long w1 = TriggerFifoDescriptor.nopWord1(-1L) | LAP_MASK;
        assertEquals(TriggerFifoDescriptor.PAYLOAD_MASK, TriggerFifoDescriptor.cookie(w1));
        assertEquals("NOP cookie 42", Trigger.decode(TriggerFifoDescriptor.controlWord0(KIND_NOP), 42, 0, 0).toString());
    }

    @Test
    void fieldsOutOfRangeAreRefusedWithTheirName() {
        assertFalse(TriggerFifoDescriptor.putFits(FIELD_LIMIT, 0, 0, 0, 0));
        assertFalse(TriggerFifoDescriptor.putFits(0, FIELD_LIMIT, 0, 0, 0));
        assertFalse(TriggerFifoDescriptor.putFits(0, 0, FIELD_LIMIT, 0, 0));
        assertFalse(TriggerFifoDescriptor.putFits(0, 0, 0, 4, 0));
        assertFalse(TriggerFifoDescriptor.putFits(0, 0, 0, 0, 4));
        assertFalse(TriggerFifoDescriptor.putFits(-1, 0, 0, 0, 0));
        assertFalse(TriggerFifoDescriptor.signalFits(8, 2, 0));
        assertFalse(TriggerFifoDescriptor.signalFits(4, SIGNAL_OP_SET, 0));
        assertFalse(TriggerFifoDescriptor.signalFits(FIELD_LIMIT, SIGNAL_OP_ADD, 0));
        assertFalse(TriggerFifoDescriptor.signalFits(8, SIGNAL_OP_ADD, 4));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TriggerFifoDescriptor.checkPut(0, FIELD_LIMIT, 8, MEMORY_HEAP, MEMORY_HEAP));
        assertTrue(e.getMessage().contains("source offset 0x4000000000 does not fit"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> TriggerFifoDescriptor.checkPut(0, 0, FIELD_LIMIT + 5, MEMORY_HEAP, MEMORY_HEAP));
        assertTrue(e.getMessage().contains("size"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> TriggerFifoDescriptor.checkSignal(12, SIGNAL_OP_SET, 0));
        assertTrue(e.getMessage().contains("not 8-byte aligned"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> TriggerFifoDescriptor.checkPut(0, 0, 8, 5, 0));
        assertTrue(e.getMessage().contains("memory id 5"), e.getMessage());
        TriggerFifoDescriptor.checkPut(MAX, MAX, MAX, 3, 3);
        TriggerFifoDescriptor.checkSignal(MAX & ~7L, SIGNAL_OP_ADD, 0);
    }

    @Test
    void lapBitsFlipEveryLapAndStartAtOne() {
        int log2 = 3; // 8 slots
        for (long p = 0; p < 64; p++) {
            long expected = ((p >> log2) & 1) == 0 ? LAP_MASK : 0;
            assertEquals(expected, TriggerFifoDescriptor.lapBits(p, log2), "position " + p);
            assertEquals(TriggerFifoDescriptor.RING_OFFSET + (p % 8) * 16, TriggerFifoDescriptor.slotOffset(p, 8));
        }
        // The zeroed ring reads as stale for lap 0.
        assertEquals(LAP_MASK, TriggerFifoDescriptor.lapBits(0, 10));
    }

    @Test
    void capacitiesArePowersOfTwoInRange() {
        for (int bad : new int[] {0, 1, 3, 6, 1000, TriggerFifoDescriptor.MAX_CAPACITY * 2}) {
            assertThrows(IllegalArgumentException.class, () -> TriggerFifoDescriptor.checkCapacity(bad));
        }
        assertEquals(128 + 2 * 16, TriggerFifoDescriptor.regionBytes(2));
        assertEquals(128 + 512 * 16, TriggerFifoDescriptor.regionBytes(512));
    }

    @Test
    void putSignalTakesTwoSlotsAndDecodesBoth() {
        long a0 = TriggerFifoDescriptor.putWord0(KIND_PUT_SIGNAL, 0x2000, 4096);
        long a1 = TriggerFifoDescriptor.putWord1(0x100, 4096, 0, 0);
        long b0 = TriggerFifoDescriptor.signalWord0(KIND_SIGNAL, SIGNAL_OP_ADD, 0x40, 1, 0);
        long b1 = TriggerFifoDescriptor.signalWord1(1);
        assertEquals(2, TriggerFifoDescriptor.slots(a0));
        assertEquals(1, TriggerFifoDescriptor.slots(b0));
        assertEquals("PUT_SIGNAL 4096 B heap[0x100] -> peer heap[0x2000], then add 1 -> peer heap[0x40]",
                Trigger.decode(a0, a1, b0, b1).toString());
    }
}
