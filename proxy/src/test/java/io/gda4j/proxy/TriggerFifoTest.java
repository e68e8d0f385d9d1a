package io.gda4j.proxy;

import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_NOP;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_PUT;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_PUT_SIGNAL;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_SIGNAL;
import static io.gda4j.proxy.TriggerFifoDescriptor.LAP_MASK;
import static io.gda4j.proxy.TriggerFifoDescriptor.SIGNAL_OP_ADD;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * The FIFO protocol against the simulated GPU producer: many producers, many laps, no trigger lost, none seen twice,
 * each producer's order kept; stale and half-written slots never taken; back-pressure on a tiny ring.
 */
class TriggerFifoTest {
    static final long SECOND = 1_000_000_000L;

    static ByteBuffer region(int capacity) {
        return ByteBuffer.allocateDirect(TriggerFifoDescriptor.regionBytes(capacity)).order(ByteOrder.nativeOrder());
    }

    /** A NOP whose cookie is producer * 2^32 + sequence. */
    static long cookie(int producer, long seq) {
        return (long) producer << 32 | seq;
    }

    /** Records NOP cookies in order. */
    static final class Recorder implements TriggerHandler {
        final List<Long> cookies = new ArrayList<>();
        final List<Long> positions = new ArrayList<>();

        @Override
        public void onTrigger(long position, long word0, long word1, long next0, long next1) {
            assertEquals(0, (word0 | word1 | next0 | next1) & LAP_MASK, "the lap bit reached the handler");
            positions.add(position);
            cookies.add(TriggerFifoDescriptor.cookie(word1));
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 4, 64})
    void oneProducerWrapsManyTimesAndEveryTriggerArrivesOnceInOrder(int capacity) throws Exception {
        ByteBuffer r = region(capacity);
        TriggerFifo fifo = new TriggerFifo(r, capacity);
        SimulatedDeviceProducer producer = new SimulatedDeviceProducer(r, capacity, false);
        int n = 200_000;
        Thread t = new Thread(() -> {
            for (int i = 0; i < n; i++) {
                long q = producer.push(TriggerFifoDescriptor.controlWord0(KIND_NOP), cookie(0, i), 10 * SECOND);
                if (q != i) {
                    throw new AssertionError("push " + i + " got position " + q);
                }
            }
        });
        t.start();
        Recorder rec = new Recorder();
        long deadline = System.nanoTime() + 60 * SECOND;
        while (rec.cookies.size() < n && System.nanoTime() < deadline) {
            fifo.poll(rec, 7);
        }
        t.join();
        assertEquals(n, rec.cookies.size());
        for (int i = 0; i < n; i++) {
            assertEquals(i, (long) rec.cookies.get(i));
            assertEquals(i, (long) rec.positions.get(i));
        }
        assertEquals(n, fifo.tail());
        assertEquals(n, fifo.publishedTail());
        assertTrue(n / capacity > 1000 || capacity == 64, "not enough laps");
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void manyProducersLoseNothingDuplicateNothingAndKeepTheirOrder(boolean word1First) throws Exception {
        int capacity = 16;
        int producers = 4;
        int perProducer = 50_000;
        ByteBuffer r = region(capacity);
        TriggerFifo fifo = new TriggerFifo(r, capacity);
        SimulatedDeviceProducer producer = new SimulatedDeviceProducer(r, capacity, word1First);
        CountDownLatch start = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            int id = p;
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    for (int i = 0; i < perProducer; i++) {
                        long q;
                        if (i % 5 == 4) {
                            // A two-slot trigger: the pair must arrive together, whichever slot lands first.
                            q = producer.push2(TriggerFifoDescriptor.putWord0(KIND_PUT_SIGNAL, id, i),
                                    TriggerFifoDescriptor.putWord1(0, i, 0, 0),
                                    TriggerFifoDescriptor.signalWord0(KIND_SIGNAL, SIGNAL_OP_ADD, 8L * id, cookie(id, i), 0),
                                    TriggerFifoDescriptor.signalWord1(cookie(id, i)), 10 * SECOND);
                        } else {
                            q = producer.push(TriggerFifoDescriptor.controlWord0(KIND_NOP), cookie(id, i), 10 * SECOND);
                        }
                        if (q < 0) {
                            throw new AssertionError("producer " + id + " push " + i + " failed with " + q);
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
            t.start();
            threads.add(t);
        }
        long[] next = new long[producers];
        int[] pairs = {0};
        TriggerHandler check = (position, w0, w1, n0, n1) -> {
            long c;
            if (TriggerFifoDescriptor.kind(w0) == KIND_PUT_SIGNAL) {
                c = TriggerFifoDescriptor.signalValue(n0, n1);
                int id = (int) (c >>> 32);
                assertEquals(id, TriggerFifoDescriptor.dstOffset(w0), "the pair's halves come from one push");
                assertEquals(c & 0xffff_ffffL, TriggerFifoDescriptor.sizeBytes(w0, w1));
                pairs[0]++;
            } else {
                c = TriggerFifoDescriptor.cookie(w1);
            }
            int id = (int) (c >>> 32);
            long seq = c & 0xffff_ffffL;
            assertEquals(next[id], seq, "producer " + id + ": lost, repeated or reordered trigger");
            next[id]++;
        };
        start.countDown();
        long total = (long) producers * perProducer;
        long seen = 0;
        long deadline = System.nanoTime() + 120 * SECOND;
        while (seen < total && System.nanoTime() < deadline && failure.get() == null) {
            int got = fifo.poll(check, 64);
            seen += got;
            if (got == 0) {
                Thread.yield(); // more threads than cores here: let the producer we wait for run
            }
        }
        for (Thread t : threads) {
            t.join();
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        assertEquals(total, seen);
        for (int p = 0; p < producers; p++) {
            assertEquals(perProducer, next[p], "producer " + p);
        }
        assertEquals(producers * (perProducer / 5), pairs[0]);
        assertEquals(0, fifo.poll(check, 64), "nothing may follow the last trigger");
        assertFalse(fifo.hasPublished());
    }

    @Test
    void aRegionMustBeDirectAndLargeEnoughOnEveryJdk() {
        ByteBuffer heap = ByteBuffer.allocate(TriggerFifoDescriptor.regionBytes(16));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new TriggerFifo(heap, 16));
        assertTrue(e.getMessage().contains("direct buffer"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new SimulatedDeviceProducer(heap, 16, false));
        e = assertThrows(IllegalArgumentException.class, () -> new TriggerFifo(region(8), 16));
        assertTrue(e.getMessage().contains("needs a region of"), e.getMessage());
    }

    @Test
    void aSlotFromTheLastLapIsStaleAndAHalfWrittenSlotIsNotTaken() {
        int capacity = 4;
        ByteBuffer r = region(capacity);
        TriggerFifo fifo = new TriggerFifo(r, capacity);
        Recorder rec = new Recorder();
        // An all-zero ring is stale for lap 0.
        assertEquals(0, fifo.poll(rec, 10));
        // Lap 1's lap bit (0) in slot 0 while the consumer expects lap 0's (1): stale.
        int s0 = TriggerFifoDescriptor.slotOffset(0, capacity);
        r.putLong(s0, 5);
        r.putLong(s0 + 8, 6);
        assertEquals(0, fifo.poll(rec, 10));
        // Only word1 fresh: the other half is still on its way.
        r.putLong(s0 + 8, LAP_MASK | 6);
        assertEquals(0, fifo.poll(rec, 10));
        assertTrue(fifo.hasPublished());
        r.putLong(s0, LAP_MASK | TriggerFifoDescriptor.controlWord0(KIND_NOP));
        assertEquals(1, fifo.poll(rec, 10));
        assertEquals(List.of(6L), rec.cookies);
        // Only word0 fresh.
        int s1 = TriggerFifoDescriptor.slotOffset(1, capacity);
        r.putLong(s1, LAP_MASK | TriggerFifoDescriptor.controlWord0(KIND_NOP));
        assertEquals(0, fifo.poll(rec, 10));
        r.putLong(s1 + 8, LAP_MASK | 7);
        assertEquals(1, fifo.poll(rec, 10));
        assertEquals(2, fifo.publishedTail());
    }

    @Test
    void aPutSignalAcrossTheRingsEndWaitsForItsSecondSlot() {
        int capacity = 4;
        ByteBuffer r = region(capacity);
        TriggerFifo fifo = new TriggerFifo(r, capacity);
        SimulatedDeviceProducer producer = new SimulatedDeviceProducer(r, capacity, false);
        Recorder rec = new Recorder();
        for (int i = 0; i < 3; i++) {
            producer.push(TriggerFifoDescriptor.controlWord0(KIND_NOP), i, SECOND);
        }
        assertEquals(3, fifo.poll(rec, 10));
        // Positions 3 (last slot) and 4 (slot 0, lap 1): write the first half only.
        int s3 = TriggerFifoDescriptor.slotOffset(3, capacity);
        long lap0 = TriggerFifoDescriptor.lapBits(3, 2);
        r.putLong(s3, lap0 | TriggerFifoDescriptor.putWord0(KIND_PUT_SIGNAL, 64, 8));
        r.putLong(s3 + 8, lap0 | TriggerFifoDescriptor.putWord1(0, 8, 0, 0));
        assertEquals(0, fifo.poll(rec, 10), "a PUT_SIGNAL without its signal slot was taken");
        long lap1 = TriggerFifoDescriptor.lapBits(4, 2);
        assertEquals(0, lap1, "position 4 is on lap 1");
        int s4 = TriggerFifoDescriptor.slotOffset(4, capacity);
        r.putLong(s4 + 8, lap1 | TriggerFifoDescriptor.signalWord1(99));
        r.putLong(s4, lap1 | TriggerFifoDescriptor.signalWord0(KIND_SIGNAL, 0, 128, 99, 0));
        long[] seen = new long[5];
        assertEquals(1, fifo.poll((p, w0, w1, n0, n1) -> {
            seen[0] = p;
            seen[1] = TriggerFifoDescriptor.dstOffset(w0);
            seen[2] = TriggerFifoDescriptor.sizeBytes(w0, w1);
            seen[3] = TriggerFifoDescriptor.wordOffset(n0);
            seen[4] = TriggerFifoDescriptor.signalValue(n0, n1);
        }, 10));
        assertArrayEquals(new long[] {3, 64, 8, 128, 99}, seen);
        assertEquals(5, fifo.publishedTail());
    }

    @Test
    void aTinyRingPushesBackAndTheProducerTimesOutOrSeesTheStopWhenNobodyPops() throws Exception {
        int capacity = 2;
        ByteBuffer r = region(capacity);
        TriggerFifo fifo = new TriggerFifo(r, capacity);
        SimulatedDeviceProducer producer = new SimulatedDeviceProducer(r, capacity, false);
        assertEquals(0, producer.push(TriggerFifoDescriptor.controlWord0(KIND_NOP), 0, SECOND));
        assertEquals(1, producer.push(TriggerFifoDescriptor.controlWord0(KIND_NOP), 1, SECOND));
        long t0 = System.nanoTime();
        assertEquals(SimulatedDeviceProducer.TIMED_OUT,
                producer.push(TriggerFifoDescriptor.controlWord0(KIND_NOP), 2, 50_000_000L));
        assertTrue(System.nanoTime() - t0 >= 50_000_000L, "gave up before its timeout");
        // The claimed-but-unpublished position 2 now blocks the ring, as on the device: a stopped proxy ends it fast.
        fifo.putStateRelease(TriggerFifoDescriptor.STATE_STOPPED);
        assertEquals(SimulatedDeviceProducer.PROXY_STOPPED,
                producer.push(TriggerFifoDescriptor.controlWord0(KIND_NOP), 3, 10 * SECOND));
        assertEquals(TriggerFifoDescriptor.STATE_STOPPED, fifo.stateAcquire());
    }

    @Test
    void backPressureBlocksProducersUntilTheConsumerPops() throws Exception {
        int capacity = 2;
        ByteBuffer r = region(capacity);
        TriggerFifo fifo = new TriggerFifo(r, capacity);
        SimulatedDeviceProducer producer = new SimulatedDeviceProducer(r, capacity, true);
        AtomicBoolean done = new AtomicBoolean();
        int n = 1000;
        Thread t = new Thread(() -> {
            for (int i = 0; i < n; i++) {
                if (producer.push(TriggerFifoDescriptor.controlWord0(KIND_NOP), i, 10 * SECOND) < 0) {
                    return;
                }
            }
            done.set(true);
        });
        t.start();
        Thread.sleep(50);
        assertFalse(done.get(), "1000 pushes fitted in a ring of 2");
        assertTrue(producer.head() <= 3, "producers ran " + producer.head() + " positions ahead of a ring of 2");
        Recorder rec = new Recorder();
        while (rec.cookies.size() < n) {
            fifo.poll(rec, 1);
            if (rec.cookies.size() % 100 == 0) {
                Thread.onSpinWait();
            }
        }
        t.join(TimeUnit.SECONDS.toMillis(10));
        assertTrue(done.get());
        for (int i = 0; i < n; i++) {
            assertEquals(i, (long) rec.cookies.get(i));
        }
    }

    @Test
    void aHandlerFailureLeavesTheFailingTriggerUnpoppedAndReleasesTheOnesBefore() {
        int capacity = 8;
        ByteBuffer r = region(capacity);
        TriggerFifo fifo = new TriggerFifo(r, capacity);
        SimulatedDeviceProducer producer = new SimulatedDeviceProducer(r, capacity, false);
        for (int i = 0; i < 5; i++) {
            producer.push(i == 2 ? TriggerFifoDescriptor.putWord0(KIND_PUT, 0, 1) : TriggerFifoDescriptor.controlWord0(KIND_NOP),
                    i, SECOND);
        }
        TriggerHandler failsOnPut = (p, w0, w1, n0, n1) -> {
            if (TriggerFifoDescriptor.kind(w0) == KIND_PUT) {
                throw new IllegalStateException("no copy engine here");
            }
        };
        assertThrows(IllegalStateException.class, () -> fifo.poll(failsOnPut, 10));
        assertEquals(2, fifo.tail());
        assertEquals(2, fifo.publishedTail());
    }
}
