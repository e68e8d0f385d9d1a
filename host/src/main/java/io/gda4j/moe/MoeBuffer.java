package io.gda4j.moe;

import io.gda4j.moe.core.TimedOutWait;
import io.gda4j.moe.core.WorkQueueBudget;
import io.gda4j.moe.ht.HighThroughputBuffer;
import io.gda4j.moe.ht.HighThroughputSizing;
import io.gda4j.moe.ht.PeerPaths;
import io.gda4j.moe.ll.LowLatencyBuffer;
import io.gda4j.transport.Capability;
import io.gda4j.transport.Transport;
import io.gda4j.world.DeviceWaitTimeoutException;
import io.gda4j.world.HeapBuffer;
import io.gda4j.world.Rank;
import io.gda4j.world.World;

import java.util.HashMap;
import java.util.Map;

/**
 * Expert-parallel dispatch and combine for a world, both modes behind one door as DeepEP's {@code Buffer}: the
 * config's high-throughput part (training and prefill: rings and counters in the symmetric heap, and per local rank
 * its layout, channel state and output tensors in device memory) and its low-latency part (decoding: two alternating
 * buffers and their counters), either or both. Everything is allocated and the kernels are loaded here, so the calls
 * only launch kernels (ranks that share a GPU may not allocate or load while a kernel on it runs; see
 * io.gda4j.world). Use one {@link MoeRank} per rank this process drives:
 *
 * <pre>{@code
 * try (MoeBuffer moe = MoeBuffer.create(world, config)) {
 *     for (Rank r : world.localRanks()) handles[r.rank()] = moe.rank(r.rank()).layout(topk[r.rank()]);
 *     for (Rank r : world.localRanks()) out[r.rank()] = moe.rank(r.rank()).dispatch(x, null, topk, w, handles[r.rank()]);
 *     ...
 * }
 * }</pre>
 * Every rank must make the same sequence of calls of both modes. {@link #close()} waits for the ranks' calls, frees
 * the device memory and returns the heap regions to the world's heap.
 */
public final class MoeBuffer implements AutoCloseable {
    private final World world;
    private final MoeConfig config;
    /** Null: the config has no high-throughput part. */
    private final HighThroughputBuffer highThroughput;
    /** Null: the config has no low-latency part. */
    private final LowLatencyBuffer lowLatency;
    private final Map<Integer, MoeRank> ranks = new HashMap<>();

    private MoeBuffer(World world, MoeConfig config) {
        this.world = world;
        this.config = config;
        // Every process asks (all-gathers): the heap offsets depend on the answers, so all must agree.
        boolean staged = anyStaged(world);
        PeerPaths paths = !staged ? PeerPaths.DIRECT
                : world.anyPair(t -> !t.has(Capability.DIRECT) && !t.has(Capability.HOST_TRANSFERS)) ? PeerPaths.RINGS
                : PeerPaths.HOST_TRANSFERS;
        long lowLatencyHeap = config.hasLowLatency() ? config.lowLatencySizing(world.size(), staged).heapBytes() : 0;
        this.highThroughput = config.hasHighThroughput()
                ? new HighThroughputBuffer(world, config.highThroughputPart(), paths, lowLatencyHeap) : null;
        LowLatencyBuffer ll = null;
        if (config.hasLowLatency()) {
            try {
                ll = new LowLatencyBuffer(world, config.lowLatencyPart(), staged);
            } catch (RuntimeException e) {
                if (highThroughput != null) {
                    try {
                        highThroughput.close();
                    } catch (RuntimeException c) {
                        e.addSuppressed(c);
                    }
                }
                throw e;
            }
        }
        this.lowLatency = ll;
        for (Rank r : world.localRanks()) {
            ranks.put(r.rank(), new MoeRank(r, highThroughput == null ? null : highThroughput.rank(r.rank()),
                    lowLatency == null ? null : lowLatency.rank(r.rank())));
        }
    }

    /**
     * Sizes and allocates the buffers of {@code config} in {@code world} (heap: {@link MoeConfig#heapBytes(int)} per
     * rank at most, both parts), and loads the kernels. Every process of the world calls it (it exchanges whether some
     * pair of ranks is proxy or ibgda). Call it before launching kernels that wait for each other.
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
     * Whether some pair of ranks of {@code world} is not {@linkplain Capability#DIRECT direct} (neither p2p nor
     * self: proxy or ibgda), in every process's view: each process knows its own ranks' transports exactly, and the
     * sections for such pairs (rings, staging) must be the same everywhere because the heap offsets are.
     */
    private static boolean anyStaged(World world) {
        return world.anyPair(MoeBuffer::staged);
    }

    /**
     * Whether a pair over {@code t} is staged (proxy, ibgda: not {@linkplain Capability#DIRECT direct}): one such pair
     * gives the world the staging sections and the counted low-latency protocol; a world without one runs the tagged
     * protocol by default ({@link io.gda4j.moe.ll.LowLatencySizing#tagged()}).
     */
    static boolean staged(Transport t) {
        return !t.has(Capability.DIRECT);
    }

    /**
     * Why the streams of a GPU of this world could share hardware work queues ({@link WorkQueueBudget}), or null.
     * Counts every open stream of the ranks' contexts on each GPU: the ranks' own and those the transports made.
     */
    static String queueProblem(World world) {
        return WorkQueueBudget.problem(world, 0);
    }

    public World world() {
        return world;
    }

    public MoeConfig config() {
        return config;
    }

    /** The calls of local rank {@code rank}, both modes. */
    public MoeRank rank(int rank) {
        // The part refuses a rank this process does not drive, and any rank once closed.
        if (highThroughput != null) {
            highThroughput.rank(rank);
        } else {
            lowLatency.rank(rank);
        }
        return ranks.get(rank);
    }

    /**
     * The high-throughput part's sizes and heap offsets in this world (for the references, checks and benchmarks).
     *
     * @throws IllegalStateException when the config has no high-throughput part
     */
    public HighThroughputSizing sizing() {
        return ht().sizing();
    }

    /**
     * What moves the high-throughput rows in this world and why, in words (the SMs' stores, the copy engines, the
     * host-queued transfers over the proxy, or the rings), for a benchmark's notes.
     *
     * @throws IllegalStateException when the config has no high-throughput part
     */
    public String highThroughputForm() {
        return ht().form();
    }

    /** The heap region holding the high-throughput rings and counters (the same offset on every rank). */
    public HeapBuffer heapRegion() {
        return ht().heapRegion();
    }

    /**
     * The low-latency part: its sizes and heap offsets in this world, and its memory, for the references, checks and
     * benchmarks (the calls go through {@link #rank(int)}).
     *
     * @throws IllegalStateException when the config has no low-latency part
     */
    public LowLatencyBuffer lowLatency() {
        return ll();
    }

    private HighThroughputBuffer ht() {
        return MoeConfig.present(highThroughput, MoeConfig.NO_HIGH_THROUGHPUT);
    }

    private LowLatencyBuffer ll() {
        return MoeConfig.present(lowLatency, MoeConfig.NO_LOW_LATENCY);
    }

    /**
     * Throws the first device error of the world; a wait that timed out in a MoE kernel becomes a
     * {@link MoeTimeoutException} naming the rank, the peer, the counter and (high throughput) the channel or (low
     * latency) the expert and buffer.
     */
    public void checkErrors() {
        try {
            world.checkErrors();
        } catch (DeviceWaitTimeoutException e) {
            TimedOutWait w = highThroughput == null ? null : highThroughput.named(e);
            if (w == null && lowLatency != null) {
                w = lowLatency.named(e);
            }
            if (w == null) {
                throw e;
            }
            throw new MoeTimeoutException(w.message(), w.rank(), w.peer(), e);
        }
    }

    /**
     * Refuses every later call, waits for every rank's queued calls (a call waiting for a peer that never made it ends
     * at the device wait timeout), frees the ranks' device memory and streams, and returns the heap regions to the
     * world's heap. Every process of the world closes its buffers in the same order (the heap plans must stay the
     * same). When a wait fails a region stays reserved, since a kernel may still use it, and the failure is thrown.
     * The low-latency part closes first (it was made last), then the high-throughput one, even when the first fails.
     */
    @Override
    @SuppressWarnings("try")  // the resource is closed, not used: try-with-resources closes it after the other
    public void close() {
        try (HighThroughputBuffer first = highThroughput) {
            if (lowLatency != null) {
                lowLatency.close();
            }
        }
    }
}
