package io.gda4j.proxy;

import io.gda4j.nic.CqeErrorRecord;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_FLUSH;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_PUT;
import static io.gda4j.proxy.TriggerFifoDescriptor.KIND_PUT_SIGNAL;
import static io.gda4j.proxy.TriggerFifoDescriptor.MEMORY_HEAP;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.mlx5.CqeSyndrome;
import io.gda4j.nic.emulated.EmulatedFault;
import io.gda4j.world.ErrorRecord;
import io.gda4j.world.ErrorRecordDescriptor.Op;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

/**
 * One direction of a verbs link under test, without a GPU: a trigger FIFO in host memory, a simulated device that
 * pushes into it, the {@link VerbsHandler} over the link, its {@link Channel}, and what the handler published (flush
 * completions, the device error record, abort requests). Add {@link #channel} to a {@link ProxyService} to run it.
 */
final class VerbsTestChannel {
    static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    static final int DEPTH = 64;

    final ByteBuffer region = TriggerFifoTest.region(DEPTH);
    final TriggerFifo fifo = new TriggerFifo(region, DEPTH);
    final SimulatedDeviceProducer producer = new SimulatedDeviceProducer(region, DEPTH, false);
    final AtomicLong done = new AtomicLong();
    final AtomicReference<ByteBuffer> record = new AtomicReference<>();
    final AtomicInteger aborts = new AtomicInteger();
    final VerbsHandler handler;
    final Channel channel;
    final VerbsLink link;

    VerbsTestChannel(VerbsLink link, long window, long creditTimeoutNanos) {
        this.link = link;
        String name = "rank " + link.localRank() + " -> rank " + link.peerRank();
        handler = new VerbsHandler(name, link, window, creditTimeoutNanos, 5 * SECOND, done::set,
                r -> record.set(copy(r)));
        channel = new Channel(name, fifo, handler, 16, aborts::incrementAndGet);
    }

    long put(long dst, long src, long bytes) {
        return check(producer.push(TriggerFifoDescriptor.putWord0(KIND_PUT, dst, bytes),
                TriggerFifoDescriptor.putWord1(src, bytes, MEMORY_HEAP, MEMORY_HEAP), 10 * SECOND));
    }

    long putSignal(long dst, long src, long bytes, int op, long word, long value) {
        return check(producer.push2(TriggerFifoDescriptor.putWord0(KIND_PUT_SIGNAL, dst, bytes),
                TriggerFifoDescriptor.putWord1(src, bytes, MEMORY_HEAP, MEMORY_HEAP),
                TriggerFifoDescriptor.signalWord0(KIND_PUT_SIGNAL, op, word, value, MEMORY_HEAP),
                TriggerFifoDescriptor.signalWord1(value), 10 * SECOND));
    }

    long signal(int kind, int op, long word, long value) {
        return check(producer.push(TriggerFifoDescriptor.signalWord0(kind, op, word, value, MEMORY_HEAP),
                TriggerFifoDescriptor.signalWord1(value), 10 * SECOND));
    }

    long flush() {
        return check(producer.push(TriggerFifoDescriptor.controlWord0(KIND_FLUSH), 0, 10 * SECOND));
    }

    /** Pushes a FLUSH and waits until the handler published it. */
    void flushAndWait() {
        long at = flush();
        await(() -> done.get() >= at + 1 || channel.isFaulted(), "flush at " + at);
        assertFalse(channel.isFaulted(), () -> channel.problem().orElse("?"));
    }

    /** Waits for the device error record the handler wrote and the channel's failure. */
    ErrorRecord awaitRecord() {
        await(() -> record.get() != null && channel.isFaulted(), "the error record");
        return ErrorRecord.decode(record.get());
    }

    private long check(long position) {
        assertTrue(position >= 0, () -> "push failed: " + position + ": " + channel.problem().orElse("no problem"));
        return position;
    }

    /** {@code good} with a heap key the peer's NIC never made. */
    static VerbsLink withWrongPeerKey(VerbsLink good) {
        return new VerbsLink(good.localRank(), good.peerRank(), good.peerDescription(), good.poster(),
                good.localHeap(), good.localLkey(), good.peerHeap(), good.peerRkey() ^ 0x5a5a00, good.heapBytes(),
                good.fetchAddress(), good.fetchLkey(), false, good.localCredits(), good.peerCredits(),
                good.peerCreditsRkey());
    }

    /** The device error record of rank 0's put to rank 1 refused for a key the NIC never made, on {@code good}'s QP. */
    static void assertUnknownKeyCqe(ErrorRecord record, VerbsLink good) {
        assertEquals(CqeErrorRecord.CODE, record.code());
        assertEquals(0, record.rank());
        assertEquals(1, record.peer());
        assertEquals(Op.PUT, record.op());
        assertEquals(CqeSyndrome.REMOTE_ACCESS.code(), (int) (record.seen() & 0xff));
        assertEquals(EmulatedFault.UNKNOWN_RKEY.vendorSyndrome(), (int) (record.seen() >>> 8 & 0xff));
        assertEquals(good.poster().qp().qpn(), record.cmp());
    }

    static ByteBuffer copy(ByteBuffer r) {
        ByteBuffer c = ByteBuffer.allocate(r.capacity()).order(ByteOrder.LITTLE_ENDIAN);
        c.put(r.duplicate().clear());
        return c.flip();
    }

    /** Waits up to 20 s for {@code condition}: long, so a loaded machine cannot fail a test that is right. */
    static void await(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + 20 * SECOND;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.yield();
        }
    }
}
