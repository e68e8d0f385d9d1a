package io.gda4j.proxy;

import static io.gda4j.proxy.TriggerFifoDescriptor.CONTROL_STATE_OFFSET;
import static io.gda4j.proxy.TriggerFifoDescriptor.CONTROL_TAIL_OFFSET;
import static io.gda4j.proxy.TriggerFifoDescriptor.STATE_RUNNING;
import static io.gda4j.proxy.TriggerFifoDescriptor.WORD0_OFFSET;
import static io.gda4j.proxy.TriggerFifoDescriptor.WORD1_OFFSET;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The GPU's push protocol of {@code gda4j/transport/proxy/proxy.cuh}, run by JVM threads: a test instrument and a benchmark
 * driver for the host side, labelled as such. Any number of threads may push at once, as GPU threads do. The head and
 * the tail cache, which live in GPU memory on the device, are fields here; the ring, the tail and the state word are
 * the shared region, as on the device.
 *
 * <p>Hot-path results are codes: a push returns its position (&ge; 0), {@link #TIMED_OUT} or {@link #PROXY_STOPPED}.
 */
public final class SimulatedDeviceProducer {
    /** No room appeared before the timeout: the consumer is not popping. */
    public static final long TIMED_OUT = -1;
    /** The consumer marked the FIFO stopped or failed while the producer waited for room. */
    public static final long PROXY_STOPPED = -2;

    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private final ByteBuffer region;
    private final int capacity;
    private final int capacityLog2;
    private final AtomicLong head = new AtomicLong();
    private final AtomicLong tailCache = new AtomicLong();
    private final boolean word1First;

    /**
     * @param word1First publish word1 before word0, the order the consumer must be robust to (a torn 16-byte store
     *                   seen half-written); the device writes both at once
     */
    public SimulatedDeviceProducer(ByteBuffer region, int capacity, boolean word1First) {
        TriggerFifoDescriptor.checkRegion(region, capacity);
        this.region = region.duplicate().order(ByteOrder.nativeOrder());
        this.capacity = capacity;
        this.capacityLog2 = Integer.numberOfTrailingZeros(capacity);
        this.word1First = word1First;
    }

    /** Pushes one trigger (words without lap bits); its position, or a negative code. */
    public long push(long word0, long word1, long timeoutNanos) {
        long q = claim(1, timeoutNanos);
        if (q >= 0) {
            publish(q, word0, word1);
        }
        return q;
    }

    /** Pushes a two-slot trigger (PUT_SIGNAL): {a0, a1} then {b0, b1} at consecutive positions. */
    public long push2(long a0, long a1, long b0, long b1, long timeoutNanos) {
        long q = claim(2, timeoutNanos);
        if (q >= 0) {
            // The second slot first: the consumer must wait for both even when the first is complete.
            publish(q + 1, b0, b1);
            publish(q, a0, a1);
        }
        return q;
    }

    /** Positions claimed so far. */
    public long head() {
        return head.get();
    }

    private long claim(int slots, long timeoutNanos) {
        long q = head.getAndAdd(slots);
        long last = q + slots - 1;
        if (last < tailCache.get() + capacity) {
            return q;
        }
        long deadline = System.nanoTime() + timeoutNanos;
        for (int spins = 0;; spins++) {
            long tail = (long) LONGS.getAcquire(region, CONTROL_TAIL_OFFSET);
            if (last < tail + capacity) {
                tailCache.accumulateAndGet(tail, Math::max);
                return q;
            }
            if ((long) LONGS.getAcquire(region, CONTROL_STATE_OFFSET) != STATE_RUNNING) {
                return PROXY_STOPPED;
            }
            if (System.nanoTime() - deadline > 0) {
                return TIMED_OUT;
            }
            // GPU threads are never descheduled; JVM threads are, and a spinning producer can starve the one that
            // holds the position the consumer waits for when there are more threads than cores.
            if ((spins & 63) == 63) {
                Thread.yield();
            } else {
                Thread.onSpinWait();
            }
        }
    }

    private void publish(long position, long word0, long word1) {
        int offset = TriggerFifoDescriptor.slotOffset(position, capacity);
        long lap = TriggerFifoDescriptor.lapBits(position, capacityLog2);
        if (word1First) {
            LONGS.setRelease(region, offset + WORD1_OFFSET, word1 | lap);
            LONGS.setRelease(region, offset + WORD0_OFFSET, word0 | lap);
        } else {
            LONGS.setRelease(region, offset + WORD0_OFFSET, word0 | lap);
            LONGS.setRelease(region, offset + WORD1_OFFSET, word1 | lap);
        }
    }
}
