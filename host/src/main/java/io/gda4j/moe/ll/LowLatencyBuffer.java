package io.gda4j.moe.ll;

import io.gda4j.moe.core.MoeRankSet;
import io.gda4j.moe.core.TimedOutWait;
import io.gda4j.moe.core.WorkQueueBudget;
import io.gda4j.world.DeviceWaitTimeoutException;
import io.gda4j.world.HeapBuffer;
import io.gda4j.world.World;

/**
 * The low-latency (decoding) part of a MoeBuffer (io.gda4j.moe.MoeBuffer makes it): two alternating buffers and the
 * counters in the symmetric heap, and per local rank its route state and outputs in device memory
 * ({@link LowLatencyRank}). Everything is allocated and the kernels are loaded here, so the calls only launch
 * kernels: no host synchronisation, CUDA-graph safe. {@link #close()} waits for the ranks' calls, frees the device
 * memory and returns the heap region to the world's heap.
 */
public final class LowLatencyBuffer implements AutoCloseable {
    /** The PTX module of the low-latency kernels ({@code device-ptx/kernels/moe_ll.cu}). */
    public static final String MODULE = "moe_ll";

    private final World world;
    private final LowLatencyPart part;
    private final LowLatencySizing sizing;
    private final HeapBuffer region;
    private final MoeRankSet<LowLatencyRank> ranks;

    /**
     * Sizes and allocates {@code part}'s buffers in {@code world} ({@link LowLatencySizing#heapBytes()} of heap per
     * rank) and loads the kernels.
     *
     * @param staged whether some pair of ranks is proxy or ibgda, as every process of the world found together (the
     *               heap offsets depend on it, so all must agree)
     * @throws IllegalArgumentException when the part does not fit the world (the message says what to change)
     * @throws IllegalStateException    when the symmetric heap is too small (the message says how to raise it)
     */
    public LowLatencyBuffer(World world, LowLatencyPart part, boolean staged) {
        this.world = world;
        this.part = part;
        this.sizing = part.sizing(world.size(), staged);
        String queues = WorkQueueBudget.problem(world, 0);
        if (queues != null) {
            throw new IllegalArgumentException(queues);
        }
        world.loadModules(MODULE);
        this.region = world.heap().allocate(sizing.heapBytes());
        this.ranks = new MoeRankSet<>(world, region, "MoeBuffer", r -> new LowLatencyRank(this, r),
                LowLatencyRank::finishCalls, LowLatencyRank::close);
    }

    public World world() {
        return world;
    }

    public LowLatencyPart config() {
        return part;
    }

    public LowLatencySizing sizing() {
        return sizing;
    }

    /** The heap region holding both buffers and the counters (the same offset on every rank). */
    public HeapBuffer heapRegion() {
        return region;
    }

    /** The calls of local rank {@code rank}. */
    public LowLatencyRank rank(int rank) {
        return ranks.rank(rank);
    }

    /**
     * {@code e} in the words of this part when the word it waited for is one of its signal words or a word of its
     * tagged sections (the rank, the peer, the counter, the expert and the buffer), else null.
     */
    public TimedOutWait named(DeviceWaitTimeoutException e) {
        var rec = e.record();
        LowLatencySizing.SignalWord w = rec == null ? null : sizing.wordAt(rec.offset() - region.offset());
        if (w == null) {
            return null;
        }
        String value = w.tag() ? " still carried the tag of call 0x" + Long.toHexString(rec.seen()) + ", not this"
                + " call's 0x" + Long.toHexString(rec.expected())
                : " stayed at 0x" + Long.toHexString(rec.seen()) + ", expected at least 0x"
                + Long.toHexString(rec.expected());
        return new TimedOutWait("rank " + rec.rank() + " waited for rank " + w.peer() + ": its " + w.counter()
                + " (" + (w.expert() >= 0 ? "expert " + w.expert() + ", " : "") + "buffer " + w.buffer() + ")" + value
                + " after " + rec.elapsedNanos() / 1_000_000 + " ms; rank " + w.peer() + " is slow, failed, or never"
                + " joined this call (every rank must make the same low-latency dispatch/combine calls). "
                + e.getMessage(), rec.rank(), w.peer());
    }

    /**
     * Refuses every later call, waits for every rank's queued calls (a call waiting for a peer that never made it ends
     * at the device wait timeout), frees the ranks' device memory, and returns the heap region to the world's heap.
     * When a wait fails the region stays reserved, since a kernel may still use it, and the failure is thrown.
     */
    @Override
    public void close() {
        ranks.close();
    }
}
