package io.gda4j.moe;

import io.gda4j.transport.Capability;
import io.gda4j.world.HeapBuffer;
import io.gda4j.world.Rank;
import io.gda4j.world.World;

/**
 * Low-latency (decoding) dispatch and combine for a world: two alternating buffers and the counters in the symmetric
 * heap, and per local rank its route state and outputs in device memory. Everything is allocated and the kernels are
 * loaded here, so the calls only launch kernels: no host synchronisation, CUDA-graph safe. Use one
 * {@link MoeLowLatencyRank} per rank this process drives; every rank must make the same sequence of calls.
 *
 * <pre>{@code
 * try (MoeLowLatencyBuffer ll = MoeLowLatencyBuffer.create(world, MoeLowLatencyConfig.deepEpBuilder().build())) {
 *     MoeLowLatencyRank r = ll.rank(rank);
 *     MoeLowLatencyDispatch d = r.dispatch(x, topkIdx, false);     // d.recvX(): [L][S][hidden], d.counts()
 *     ... experts compute y ([L][S][hidden] BF16) from d.recvX() ...
 *     DeviceTensor out = r.combine(y, topkIdx, topkWeights, d, false).output();
 * }
 * }</pre>
 * {@link #close()} waits for the ranks' calls, frees the device memory and returns the heap region to the world's heap.
 */
public final class MoeLowLatencyBuffer implements AutoCloseable {
    /** The PTX module of the low-latency kernels ({@code device-ptx/kernels/moe_ll.cu}). */
    public static final String MODULE = "moe_ll";

    private final World world;
    private final MoeLowLatencyConfig config;
    private final MoeLowLatencySizing sizing;
    private final HeapBuffer region;
    private final MoeRankSet<MoeLowLatencyRank> ranks;

    private MoeLowLatencyBuffer(World world, MoeLowLatencyConfig config) {
        this.world = world;
        this.config = config;
        this.sizing = config.sizing(world.size(), anyStaged(world));
        String queues = MoeBuffer.queueProblem(world);
        if (queues != null) {
            throw new IllegalArgumentException(queues);
        }
        world.loadModules(MODULE);
        this.region = world.heap().allocate(sizing.heapBytes());
        this.ranks = new MoeRankSet<>(world, region, "MoeLowLatencyBuffer", r -> new MoeLowLatencyRank(this, r),
                MoeLowLatencyRank::finishCalls, MoeLowLatencyRank::close);
    }

    /**
     * Whether some pair of ranks of {@code world} is not {@linkplain Capability#DIRECT direct} (neither p2p nor
     * self: proxy or ibgda), in every process's view:
     * each process knows its own ranks' transports exactly, and the staging sections must be the same everywhere
     * because the heap offsets are.
     */
    static boolean anyStaged(World world) {
        boolean mine = false;
        for (Rank r : world.localRanks()) {
            for (int peer = 0; peer < world.size(); peer++) {
                // Staging is for peers whose heaps the kernels cannot store into (proxy, ibgda, none).
                mine |= !world.transport(r.rank(), peer).has(Capability.DIRECT);
            }
        }
        for (byte[] theirs : world.allGather(new byte[] {(byte) (mine ? 1 : 0)})) {
            if (theirs[0] != 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * Sizes and allocates the buffers of {@code config} in {@code world} ({@link MoeLowLatencySizing#heapBytes()} of
     * heap per rank) and loads the kernels. Every process of the world calls it (it exchanges whether some pair of
     * ranks needs staging).
     *
     * @throws IllegalArgumentException when the config does not fit the world (the message says what to change)
     * @throws IllegalStateException    when the symmetric heap is too small (the message says how to raise it)
     */
    public static MoeLowLatencyBuffer create(World world, MoeLowLatencyConfig config) {
        return new MoeLowLatencyBuffer(world, config);
    }

    public World world() {
        return world;
    }

    public MoeLowLatencyConfig config() {
        return config;
    }

    public MoeLowLatencySizing sizing() {
        return sizing;
    }

    /** The heap region holding both buffers and the counters (the same offset on every rank). */
    public HeapBuffer heapRegion() {
        return region;
    }

    /** The calls of local rank {@code rank}. */
    public MoeLowLatencyRank rank(int rank) {
        return ranks.rank(rank);
    }

    /**
     * Throws the first device error of the world; a wait that timed out in a low-latency kernel becomes a
     * {@link MoeTimeoutException} naming the rank, the peer it waited for and the counter.
     */
    public void checkErrors() {
        try {
            world.checkErrors();
        } catch (io.gda4j.world.DeviceWaitTimeoutException e) {
            MoeTimeoutException named = named(e);
            throw named != null ? named : e;
        }
    }

    /** {@code e} as a {@link MoeTimeoutException} when the word it waited for is one of this buffer's, else null. */
    MoeTimeoutException named(io.gda4j.world.DeviceWaitTimeoutException e) {
        var rec = e.record();
        MoeLowLatencySizing.SignalWord w = rec == null ? null
                : sizing.signalWord(rec.offset() - region.offset() - sizing.signals());
        if (w == null) {
            return null;
        }
        return new MoeTimeoutException("rank " + rec.rank() + " waited for rank " + w.peer() + ": its " + w.counter()
                + " (" + (w.expert() >= 0 ? "expert " + w.expert() + ", " : "") + "buffer " + w.buffer()
                + ") stayed at 0x" + Long.toHexString(rec.seen())
                + ", expected at least 0x" + Long.toHexString(rec.expected()) + " after "
                + rec.elapsedNanos() / 1_000_000 + " ms; rank " + w.peer() + " is slow, failed, or never joined this"
                + " call (every rank must make the same low-latency dispatch/combine calls). " + e.getMessage(),
                rec.rank(), w.peer(), e);
    }

    /**
     * Refuses every later call, waits for every rank's queued calls (a call waiting for a peer that never made it ends
     * at the device wait timeout), frees the ranks' device memory, and returns the heap region to the world's heap.
     * Every process of the world closes its buffers in the same order (the heap plans must stay the same). When a
     * wait fails the region stays reserved, since a kernel may still use it, and the failure is thrown.
     */
    @Override
    public void close() {
        ranks.close();
    }
}
