package io.gda4j.moe;

import io.gda4j.cuda.CudaContext;
import io.gda4j.world.HeapBuffer;
import io.gda4j.world.Rank;
import io.gda4j.world.World;

import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Expert-parallel dispatch and combine for a world: the rings and counters in the symmetric heap, and per local rank
 * its layout, channel state and output tensors in device memory. Everything is allocated and the kernels are loaded
 * here, so the calls only launch kernels (ranks that share a GPU may not allocate or load while a kernel on it runs;
 * see io.gda4j.world). Use one {@link MoeRank} per rank this process drives:
 *
 * <pre>{@code
 * try (MoeBuffer moe = MoeBuffer.create(world, config)) {
 *     for (Rank r : world.localRanks()) handles[r.rank()] = moe.rank(r.rank()).layout(topk[r.rank()]);
 *     for (Rank r : world.localRanks()) out[r.rank()] = moe.rank(r.rank()).dispatch(x, null, topk, w, handles[r.rank()]);
 *     ...
 * }
 * }</pre>
 * Every rank must make the same sequence of dispatch and combine calls. {@link #close()} waits for the ranks' calls,
 * frees the device memory and returns the heap region to the world's heap.
 */
public final class MoeBuffer implements AutoCloseable {
    /** The PTX module of the layout kernel, which both kinds of world use ({@code device-ptx/kernels/moe_layout.cu}). */
    public static final String LAYOUT_MODULE = "moe_layout";
    /** The PTX module of the dispatch and combine through rings ({@code device-ptx/kernels/moe_ring.cu}). */
    public static final String RING_MODULE = "moe_ring";
    /** The PTX module of the dispatch and combine of direct worlds ({@code device-ptx/kernels/moe_direct.cu}). */
    public static final String DIRECT_MODULE = "moe_direct";

    private final World world;
    private final MoeConfig config;
    private final MoeSizing sizing;
    private final HeapBuffer region;
    private final MoeRankSet<MoeRank> ranks;
    private final MoeLowLatencyBuffer lowLatency;  // null: no low-latency part

    private MoeBuffer(World world, MoeConfig config) {
        this.world = world;
        this.config = config;
        // Every process asks (an all-gather): the heap offsets depend on the answer, so all must agree.
        this.sizing = config.sizing(world.size(), !MoeLowLatencyBuffer.anyStaged(world));
        String rings = sizing.direct() ? null : config.ringProblem();
        if (rings != null) {
            throw new IllegalArgumentException(rings);
        }
        if (!sizing.direct() && config.rowPath() == MoeRowPath.COPY_ENGINE) {
            throw new IllegalArgumentException("MoeConfig rowPath COPY_ENGINE needs every pair of ranks to be p2p or"
                    + " self; this world has a proxy or ibgda pair, whose rows go through rings: use AUTO or SM");
        }
        checkResidency(world, config);
        world.loadModules(LAYOUT_MODULE, sizing.direct() ? DIRECT_MODULE : RING_MODULE);
        this.region = world.heap().allocate(sizing.heapBytes());
        this.ranks = new MoeRankSet<>(world, region, "MoeBuffer", r -> new MoeRank(this, r), MoeRank::finishCalls,
                MoeRank::close);
        MoeLowLatencyBuffer ll = null;
        if (config.lowLatency().isPresent()) {
            try {
                ll = MoeLowLatencyBuffer.create(world, config.lowLatency().get());
            } catch (RuntimeException e) {
                try {
                    ranks.close();
                } catch (RuntimeException c) {
                    e.addSuppressed(c);
                }
                throw e;
            }
        }
        this.lowLatency = ll;
    }

    /**
     * Sizes and allocates the buffers of {@code config} in {@code world} (heap: {@link MoeConfig#heapBytes(int)} per
     * rank at most, its low-latency part included), and loads the kernels. Call it before launching kernels that wait
     * for each other.
     *
     * @throws IllegalArgumentException when the config does not fit the world (sizes, experts per rank, rings too
     *                                  small for a chunk and a combine round where some pair is proxy or ibgda,
     *                                  more blocks than can run at once on a GPU, or more streams on a GPU than it
     *                                  has hardware work queues: the message says what to set)
     * @throws IllegalStateException    when the symmetric heap is too small (the message says how to raise it)
     */
    public static MoeBuffer create(World world, MoeConfig config) {
        return new MoeBuffer(world, config);
    }

    /**
     * The kernels of all ranks wait for each other, so every block of every rank on a GPU must be resident at once:
     * refuse a grid that might not be (one block per SM at worst: a 512-thread block of 128-register threads fills an
     * SM's registers), counted over all the ranks sharing the GPU. They also wait for the transports' streams, so each stream on the GPU needs
     * a hardware work queue of its own ({@link #queueProblem}), the communication streams the ranks are about to make
     * counted in (before they exist: a refusal leaves nothing to undo).
     */
    private static void checkResidency(World world, MoeConfig config) {
        String queues = queueProblem(world, config.communicationStream() ? 1 : 0);
        if (queues != null) {
            throw new IllegalArgumentException(queues);
        }
        for (Rank r : world.localRanks()) {
            int sms = r.device().multiprocessorCount();
            int sharing = world.ranksOnGpuOf(r.rank());
            long blocks = (long) sharing * MoeRank.blocksPerRank(config);
            if (blocks > sms) {
                throw new IllegalArgumentException("MoeConfig numChannels (" + config.numChannels() + ") x 2 blocks x "
                        + sharing + " ranks on GPU " + r.device().ordinal() + " = " + blocks + " blocks, more than its "
                        + sms + " SMs can hold at once; their kernels wait for each other, so lower numChannels (at most "
                        + sms / (2 * sharing) + " here)");
            }
        }
    }

    /**
     * Why the streams of a GPU of this world could share hardware work queues (see {@link WorkQueueBudget}), or null.
     * Counts every open stream of the ranks' contexts on each GPU: the ranks' own and those the transports made.
     */
    static String queueProblem(World world) {
        return queueProblem(world, 0);
    }

    /**
     * As {@link #queueProblem(World)}, with {@code communicationStreamsPerRank} more streams for each local rank (the
     * MoE communication streams {@link MoeRank} makes, not open yet).
     */
    static String queueProblem(World world, int communicationStreamsPerRank) {
        Map<Integer, Set<CudaContext>> contexts = new TreeMap<>();
        Map<Integer, Integer> ranks = new HashMap<>();
        for (Rank r : world.localRanks()) {
            int gpu = r.device().ordinal();
            contexts.computeIfAbsent(gpu, g -> Collections.newSetFromMap(new IdentityHashMap<>())).add(r.context());
            ranks.merge(gpu, 1, Integer::sum);
        }
        // Java's environment copy does not show what gda4j set for the driver: ask the CUDA layer.
        int connections = io.gda4j.cuda.Cuda.deviceMaxConnections();
        String env = Integer.toString(connections);
        for (Map.Entry<Integer, Set<CudaContext>> e : contexts.entrySet()) {
            int communication = communicationStreamsPerRank * ranks.get(e.getKey());
            int streams = communication;
            for (CudaContext c : e.getValue()) {
                streams += c.openStreams();
            }
            String p = WorkQueueBudget.problem(e.getKey(), ranks.get(e.getKey()), streams, communication,
                    connections, env);
            if (p != null) {
                return p;
            }
        }
        return null;
    }

    public World world() {
        return world;
    }

    public MoeConfig config() {
        return config;
    }

    public MoeSizing sizing() {
        return sizing;
    }

    /** The heap region holding the rings and counters (the same offset on every rank). */
    public HeapBuffer heapRegion() {
        return region;
    }

    /** The calls of local rank {@code rank}. */
    public MoeRank rank(int rank) {
        return ranks.rank(rank);
    }

    /**
     * The low-latency part, made with the buffer from {@link MoeConfig#lowLatency()}: its own heap region, device
     * memory and kernels beside the high-throughput ones, closed with this buffer.
     *
     * @throws IllegalStateException when the config has none
     */
    public MoeLowLatencyBuffer lowLatency() {
        if (lowLatency == null) {
            throw new IllegalStateException("this MoeBuffer has no low-latency part: build its MoeConfig with"
                    + " lowLatency(MoeLowLatencyConfig...) to make the decoding calls on it, or use a"
                    + " MoeLowLatencyBuffer");
        }
        return lowLatency;
    }

    /**
     * Throws the first device error of the world; a wait that timed out in a MoE kernel becomes a
     * {@link MoeTimeoutException} naming the rank, the peer, the channel and the counter.
     */
    public void checkErrors() {
        try {
            world.checkErrors();
        } catch (io.gda4j.world.DeviceWaitTimeoutException e) {
            var rec = e.record();
            MoeSizing.SignalWord w = rec == null ? null
                    : sizing.signalWord(rec.offset() - region.offset() - sizing.signals());
            if (w == null) {
                MoeTimeoutException named = lowLatency == null ? null : lowLatency.named(e);
                throw named != null ? named : e;
            }
            throw new MoeTimeoutException("rank " + rec.rank() + " waited for rank " + w.peer() + ": its " + w.counter()
                    + (w.channel() < 0 ? "" : " in channel " + w.channel()) + " stayed at " + rec.seen()
                    + ", expected at least " + rec.expected()
                    + " after " + rec.elapsedNanos() / 1_000_000 + " ms; rank " + w.peer() + " is slow, failed, or never"
                    + " joined this call (every rank must make the same dispatch/combine calls). " + e.getMessage(),
                    rec.rank(), w.peer(), e);
        }
    }

    /**
     * Refuses every later call, waits for every rank's queued calls (a call waiting for a peer that never made it ends
     * at the device wait timeout), frees the ranks' device memory and streams, and returns the heap region to the
     * world's heap. Every process of the world closes its buffers in the same order (the heap plans must stay the
     * same). When a wait fails the region stays reserved, since a kernel may still use it, and the failure is thrown.
     * The low-latency part closes first (it was made last), then the high-throughput one, even when the first fails.
     */
    @Override
    @SuppressWarnings("try")  // the resource is closed, not used: try-with-resources closes it after the other
    public void close() {
        try (MoeRankSet<MoeRank> highThroughput = ranks) {
            if (lowLatency != null) {
                lowLatency.close();
            }
        }
    }
}
