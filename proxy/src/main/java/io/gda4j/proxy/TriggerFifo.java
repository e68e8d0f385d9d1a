package io.gda4j.proxy;

import static io.gda4j.proxy.TriggerFifoDescriptor.CONTROL_STATE_OFFSET;
import static io.gda4j.proxy.TriggerFifoDescriptor.CONTROL_TAIL_OFFSET;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_PUT_SIGNAL;
import static io.gda4j.proxy.TriggerFifoDescriptor.LAP_MASK;
import static io.gda4j.proxy.TriggerFifoDescriptor.WORD0_OFFSET;
import static io.gda4j.proxy.TriggerFifoDescriptor.WORD1_OFFSET;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The host (consumer) side of a trigger FIFO, over the region described by {@link TriggerFifoDescriptor}: a mapped
 * pinned buffer for a GPU channel, or any direct buffer for a simulated producer. One consumer thread at a time; the
 * producers are GPU threads (or {@link SimulatedDeviceProducer}).
 *
 * <p>Ordering: {@link #poll} reads a slot's word1 with {@code getAcquire} (pairs with the producer's release store of
 * the slot), then word0, and takes the slot only when both carry the expected lap bit; after handling it releases the
 * new tail with {@code setRelease} (pairs with the producer's acquire load of the tail, so the producer cannot
 * overwrite a slot the proxy is still reading). Neither side ever clears a slot.
 */
public final class TriggerFifo {
    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private final ByteBuffer region;
    private final int capacity;
    private final int capacityLog2;
    /** Next position to pop; only the consumer thread writes it (the tail word mirrors it for the producers). */
    private long tail;

    /**
     * @param region   the FIFO region (control block, then the ring), a direct buffer; zeroed by its allocator before
     *                 first use
     * @param capacity slots, a power of two; the region must hold {@link TriggerFifoDescriptor#regionBytes(int)}
     */
    public TriggerFifo(ByteBuffer region, int capacity) {
        TriggerFifoDescriptor.checkRegion(region, capacity);
        this.region = region.duplicate().order(ByteOrder.nativeOrder());
        this.capacity = capacity;
        this.capacityLog2 = Integer.numberOfTrailingZeros(capacity);
        this.tail = (long) LONGS.getAcquire(this.region, CONTROL_TAIL_OFFSET);
    }

    public int capacity() {
        return capacity;
    }

    /** The position of the next trigger to pop (= triggers popped so far). Consumer thread only. */
    public long tail() {
        return tail;
    }

    /** The tail as published to the producers; any thread. */
    public long publishedTail() {
        return (long) LONGS.getAcquire(region, CONTROL_TAIL_OFFSET);
    }

    /**
     * Hands up to {@code limit} published triggers, in position order, to {@code handler}, then releases the new
     * tail once. Returns how many it handed over (a PUT_SIGNAL counts once). A trigger whose slots are not both
     * complete, or that the handler does not {@link TriggerHandler#admits admit} yet, is left for the next poll. If
     * the handler throws, the triggers before the failing one are popped and
     * the failing one is not; the exception propagates.
     */
    public int poll(TriggerHandler handler, int limit) {
        long position = tail;
        int handled = 0;
        try {
            while (handled < limit) {
                int offset = TriggerFifoDescriptor.slotOffset(position, capacity);
                long lap = TriggerFifoDescriptor.lapBits(position, capacityLog2);
                long word1 = (long) LONGS.getAcquire(region, offset + WORD1_OFFSET);
                if ((word1 & LAP_MASK) != lap) {
                    break;
                }
                long word0 = (long) LONGS.getAcquire(region, offset + WORD0_OFFSET);
                if ((word0 & LAP_MASK) != lap) {
                    break; // the other half of the store is still on its way
                }
                long next0 = 0;
                long next1 = 0;
                int slots = 1;
                if (TriggerFifoDescriptor.kind(word0) == KIND_PUT_SIGNAL) {
                    long next = position + 1;
                    int nextOffset = TriggerFifoDescriptor.slotOffset(next, capacity);
                    long nextLap = TriggerFifoDescriptor.lapBits(next, capacityLog2);
                    next1 = (long) LONGS.getAcquire(region, nextOffset + WORD1_OFFSET);
                    next0 = (long) LONGS.getAcquire(region, nextOffset + WORD0_OFFSET);
                    if ((next1 & LAP_MASK) != nextLap || (next0 & LAP_MASK) != nextLap) {
                        break; // the signal slot is not written yet: take the pair together
                    }
                    next0 &= ~LAP_MASK;
                    next1 &= ~LAP_MASK;
                    slots = 2;
                }
                if (!handler.admits(position, word0 & ~LAP_MASK)) {
                    break; // back-pressure: offered again at the next poll
                }
                handler.onTrigger(position, word0 & ~LAP_MASK, word1 & ~LAP_MASK, next0, next1);
                position += slots;
                handled++;
            }
        } finally {
            if (position != tail) {
                tail = position;
                LONGS.setRelease(region, CONTROL_TAIL_OFFSET, position);
            }
        }
        return handled;
    }

    /** Whether the slot at the tail carries a published trigger half or whole (a cheap look for shutdown). */
    public boolean hasPublished() {
        int offset = TriggerFifoDescriptor.slotOffset(tail, capacity);
        long lap = TriggerFifoDescriptor.lapBits(tail, capacityLog2);
        return (((long) LONGS.getAcquire(region, offset + WORD1_OFFSET)) & LAP_MASK) == lap
                || (((long) LONGS.getAcquire(region, offset + WORD0_OFFSET)) & LAP_MASK) == lap;
    }

    /** Releases the proxy's state (STATE_*); pairs with the GPU's read of the state word in its slow paths. */
    public void putStateRelease(int state) {
        LONGS.setRelease(region, CONTROL_STATE_OFFSET, (long) state);
    }

    /** The state word (acquire). */
    public int stateAcquire() {
        return (int) (long) LONGS.getAcquire(region, CONTROL_STATE_OFFSET);
    }
}
