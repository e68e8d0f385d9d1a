package io.gda4j.proxy;

import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_ATOMIC_ADD;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_SIGNAL;
import static io.gda4j.proxy.TriggerFifoDescriptor.SIGNAL_OP_ADD;
import static io.gda4j.proxy.TriggerFifoDescriptor.SIGNAL_OP_SET;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Pointer;

import java.util.Arrays;
import java.util.Optional;
import java.util.function.LongUnaryOperator;

/**
 * The traffic the verbs handler's two-rank tests drive over a pair of channels, whichever way the two sides were
 * connected, and what must have landed: puts of awkward sizes each way into the second half of the peer's heap with
 * 5-byte gaps that must stay zero, a put_signal with a SET, then interleaved signal ADDs and atomic adds from A and
 * 8-byte put_signal ADDs from B on the heap's last words. Each heap's first half holds its side's source bytes,
 * written by the caller.
 */
final class TwoWayTraffic {
    /** Where the put_signal from A lands, past every put of the second half. */
    private static final long SIGNALLED_PUT = 16384;

    private TwoWayTraffic() {
    }

    /**
     * Runs the traffic over {@code ab} (A's channel to B) and {@code ba} and checks every byte and word; {@code atA}
     * and {@code atB} map a heap offset to the address where this process reads that side's heap.
     */
    static void runAndCheck(VerbsTestChannel ab, VerbsTestChannel ba, LongUnaryOperator atA, LongUnaryOperator atB,
                            long heapBytes, byte[] fromA, byte[] fromB, int[] sizes, int rounds) {
        long flag = heapBytes - 64;
        long counter = heapBytes - 56;
        long atomicWord = heapBytes - 48;
        long fromBSignalled = heapBytes - 128;
        long dst = heapBytes / 2;
        for (int i = 0; i < sizes.length; i++) {
            ab.put(dst, 3 * i, sizes[i]);
            ba.put(dst, 5 * i, sizes[i]);
            dst += sizes[i] + 5; // gaps that must stay zero
        }
        ab.putSignal(heapBytes / 2 + SIGNALLED_PUT, 0, 4096, SIGNAL_OP_SET, flag, 0x1234_5678_9abc_def0L);
        for (int i = 0; i < rounds; i++) {
            ab.signal(KIND_SIGNAL, SIGNAL_OP_ADD, counter, 3);
            ab.signal(KIND_ATOMIC_ADD, SIGNAL_OP_ADD, atomicWord, -1);
            ba.putSignal(fromBSignalled, 100 + i, 8, SIGNAL_OP_ADD, counter, 1);
        }
        ab.flushAndWait();
        ba.flushAndWait();

        dst = heapBytes / 2;
        for (int i = 0; i < sizes.length; i++) {
            assertArrayEquals(Arrays.copyOfRange(fromA, 3 * i, 3 * i + sizes[i]), read(atB.applyAsLong(dst), sizes[i]),
                    sizes[i] + "-byte put from A");
            assertArrayEquals(Arrays.copyOfRange(fromB, 5 * i, 5 * i + sizes[i]), read(atA.applyAsLong(dst), sizes[i]),
                    sizes[i] + "-byte put from B");
            assertArrayEquals(new byte[5], read(atB.applyAsLong(dst + sizes[i]), 5), "the gap after a put from A");
            assertArrayEquals(new byte[5], read(atA.applyAsLong(dst + sizes[i]), 5), "the gap after a put from B");
            dst += sizes[i] + 5;
        }
        assertArrayEquals(Arrays.copyOf(fromA, 4096), read(atB.applyAsLong(heapBytes / 2 + SIGNALLED_PUT), 4096),
                "the put of a put_signal");
        assertEquals(0x1234_5678_9abc_def0L, word(atB.applyAsLong(flag)), "SET signal");
        assertEquals(3L * rounds, word(atB.applyAsLong(counter)), rounds + " signal ADDs of 3");
        assertEquals(-rounds, word(atB.applyAsLong(atomicWord)), rounds + " atomic_add of -1");
        assertEquals(rounds, word(atA.applyAsLong(counter)), rounds + " put_signal ADDs of 1 from B");
        assertArrayEquals(Arrays.copyOfRange(fromB, 100 + rounds - 1, 100 + rounds - 1 + 8),
                read(atA.applyAsLong(fromBSignalled), 8), "B's last 8-byte put_signal");
        assertEquals(1 + 2L * rounds + sizes.length, ab.handler.posted());
        assertEquals((long) rounds + sizes.length, ba.handler.posted());
        assertTrue(ab.handler.grantedToPeer() > 4 && ba.handler.grantedToPeer() > 4,
                "each side granted the other more than its first window");
        assertEquals(Optional.empty(), ab.channel.problem());
        assertEquals(Optional.empty(), ba.channel.problem());
    }

    static long word(long address) {
        return new Pointer(address).getLong(0);
    }

    static byte[] read(long address, int length) {
        return new Pointer(address).getByteArray(0, length);
    }
}
