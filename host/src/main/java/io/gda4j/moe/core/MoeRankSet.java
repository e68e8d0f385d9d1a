package io.gda4j.moe.core;

import io.gda4j.world.HeapBuffer;
import io.gda4j.world.Rank;
import io.gda4j.world.World;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The ranks one part of a MoE buffer (io.gda4j.moe.ht.HighThroughputBuffer, io.gda4j.moe.ll.LowLatencyBuffer)
 * drives in this process, and the heap region they share: made together (a failure part way closes those made and
 * frees the region), found by rank, and closed together.
 *
 * @param <R> the part's per-rank calls (HighThroughputRank, LowLatencyRank)
 */
public final class MoeRankSet<R> implements AutoCloseable {
    private final World world;
    private final HeapBuffer region;
    private final String owner;
    private final Consumer<R> finishCalls;
    private final Consumer<R> closeRank;
    private final Map<Integer, R> ranks = new HashMap<>();
    /** Set first by {@link #close}; read without the lock, so a call racing a close is refused at once. */
    private volatile boolean closed;

    /**
     * Zeroes {@code region} on every rank ({@link #zeroOnEveryRank}), then makes one member per local rank with
     * {@code make}. On failure it closes the members made, frees the region and rethrows.
     *
     * @param owner       the buffer's class name, for messages
     * @param finishCalls waits for a member's queued calls (a failed wait throws)
     * @param closeRank   frees a member's device memory
     */
    public MoeRankSet(World world, HeapBuffer region, String owner, Function<Rank, R> make, Consumer<R> finishCalls,
               Consumer<R> closeRank) {
        this.world = world;
        this.region = region;
        this.owner = owner;
        this.finishCalls = finishCalls;
        this.closeRank = closeRank;
        List<R> made = new ArrayList<>();
        try {
            zeroOnEveryRank(world, region);
            for (Rank r : world.localRanks()) {
                R m = make.apply(r);
                made.add(m);
                ranks.put(r.rank(), m);
            }
        } catch (RuntimeException e) {
            for (R m : made) {
                closeRank.accept(m);
            }
            world.heap().free(region);
            throw e;
        }
    }

    /**
     * Zeroes {@code region} in this process's ranks' heaps, between two barriers of the world's processes: the region
     * may have been another buffer's, whose kernels in other processes could still write into this heap until those
     * processes closed it (each close waits for its own kernels), and a peer must not send into the region before it
     * is zeroed here. A LocalWorld's barriers return at once.
     */
    public static void zeroOnEveryRank(World world, HeapBuffer region) {
        world.barrier();
        for (Rank r : world.localRanks()) {
            r.fillHeap(region.offset(), region.sizeBytes(), (byte) 0);
        }
        world.barrier();
    }

    /** The member of local rank {@code rank}. */
    public R rank(int rank) {
        R m = ranks.get(rank);
        if (m == null) {
            throw new IllegalArgumentException("rank " + rank + " is not driven by this process (world of " + world.size()
                    + " ranks)");
        }
        if (closed) {
            throw new IllegalStateException("this " + owner + " is closed");
        }
        return m;
    }

    /**
     * Refuses every later {@link #rank}, waits for every member's queued calls, closes the members, and frees the
     * region unless a wait failed (a kernel may still use it then); throws the first failure, the others suppressed.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException failure = null;
        for (R m : ranks.values()) {
            failure = attempt(failure, () -> finishCalls.accept(m));
        }
        boolean finished = failure == null;
        for (R m : ranks.values()) {
            failure = attempt(failure, () -> closeRank.accept(m));
        }
        if (finished) {
            world.heap().free(region);
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** Runs {@code step}; a failure becomes {@code first}, or is added to it as suppressed. */
    private static RuntimeException attempt(RuntimeException first, Runnable step) {
        try {
            step.run();
            return first;
        } catch (RuntimeException e) {
            if (first == null) {
                return e;
            }
            first.addSuppressed(e);
            return first;
        }
    }
}
