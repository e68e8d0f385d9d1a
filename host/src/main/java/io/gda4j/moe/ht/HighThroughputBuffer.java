package io.gda4j.moe.ht;

import io.gda4j.moe.core.MoeRankSet;
import io.gda4j.moe.core.TimedOutWait;
import io.gda4j.moe.core.WorkQueueBudget;
import io.gda4j.world.DeviceWaitTimeoutException;
import io.gda4j.world.HeapBuffer;
import io.gda4j.world.Rank;
import io.gda4j.world.World;

/**
 * The high-throughput part of a MoeBuffer (io.gda4j.moe.MoeBuffer makes it): the rings and counters in the
 * symmetric heap, and per local rank its layout, channel state and output tensors in device memory
 * ({@link HighThroughputRank}). Everything is allocated and the kernels are loaded here, so the calls only launch
 * kernels (ranks that share a GPU may not allocate or load while a kernel on it runs; see io.gda4j.world).
 * {@link #close()} waits for the ranks' calls, frees the device memory and returns the heap region to the world's
 * heap.
 */
public final class HighThroughputBuffer implements AutoCloseable {
    /** The PTX module of the layout kernel, which both kinds of world use ({@code device-ptx/kernels/moe_layout.cu}). */
    public static final String LAYOUT_MODULE = "moe_layout";
    /** The PTX module of the dispatch and combine through rings ({@code device-ptx/kernels/moe_ring.cu}). */
    public static final String RING_MODULE = "moe_ring";
    /** The PTX module of the dispatch and combine of direct worlds ({@code device-ptx/kernels/moe_direct.cu}). */
    public static final String DIRECT_MODULE = "moe_direct";

    private final World world;
    private final HighThroughputSizing sizing;
    /** The form this world got, in words (what moves the rows and why), for notes. */
    private final String choice;
    private final HeapBuffer region;
    private final MoeRankSet<HighThroughputRank> ranks;

    /**
     * Sizes and allocates {@code part}'s buffers in {@code world} and loads the kernels.
     *
     * @param paths          how every pair of ranks reaches the other, as every process of the world found together
     *                       (the heap offsets depend on it, so all must agree)
     * @param heapAfterBytes heap the buffer's other part takes after this one: AUTO keeps the rings over the proxy
     *                       where the heap's free bytes cannot hold both the copy engines' layout and that part
     * @throws IllegalArgumentException when the part does not fit the world (sizes, experts per rank, rings too small
     *                                  for a chunk and a combine round where a pair goes through rings, the copy
     *                                  engines asked for where an ibgda pair needs rings, more blocks than can run at
     *                                  once on a GPU, or more streams on a GPU than it has hardware work queues: the
     *                                  message says what to set)
     * @throws IllegalStateException    when the symmetric heap is too small (the message says how to raise it)
     */
    public HighThroughputBuffer(World world, HighThroughputPart part, PeerPaths paths, long heapAfterBytes) {
        this.world = world;
        if (paths == PeerPaths.RINGS && part.rowPath() == MoeRowPath.COPY_ENGINE) {
            throw new IllegalArgumentException("MoeConfig rowPath COPY_ENGINE needs every pair of ranks to be p2p, self"
                    + " or proxy; this world has an ibgda pair, whose rows go through rings: use AUTO or SM");
        }
        MoeRowPath rows = part.rowPath().resolve(paths);
        String choice = choice(part, paths, rows);
        if (part.rowPath() == MoeRowPath.AUTO && paths == PeerPaths.HOST_TRANSFERS) {
            // Every process's heap holds the same regions, so every process makes the same choice.
            long wanted = part.sizing(world.size(), paths, rows).heapBytes();
            long free = world.heap().largestFreeBytes();
            if (free < wanted + heapAfterBytes) {
                rows = MoeRowPath.SM;
                choice = "rings (through the proxy's triggers): the heap's " + free + " free bytes hold no room for the"
                        + " copy engines' layout (" + wanted + " bytes" + (heapAfterBytes > 0 ? ", with the low-latency"
                        + " part's " + heapAfterBytes : "") + "); raise WorldConfig heapSizeBytes to MoeConfig.heapBytes"
                        + " for the host-queued transfers";
            }
        }
        this.sizing = part.sizing(world.size(), paths, rows);
        this.choice = choice;
        String rings = sizing.direct() ? null : part.ringProblem();
        if (rings != null) {
            throw new IllegalArgumentException(rings);
        }
        checkResidency(world, part);
        world.loadModules(LAYOUT_MODULE, sizing.direct() ? DIRECT_MODULE : RING_MODULE);
        this.region = world.heap().allocate(sizing.heapBytes());
        this.ranks = new MoeRankSet<>(world, region, "MoeBuffer", r -> new HighThroughputRank(this, r),
                HighThroughputRank::finishCalls, HighThroughputRank::close);
    }

    /** The form a world of {@code paths} gets with {@code rows} (resolved), in words, and why. */
    private static String choice(HighThroughputPart part, PeerPaths paths, MoeRowPath rows) {
        String asked = part.rowPath() == MoeRowPath.AUTO ? "" : " (rowPath " + part.rowPath() + ")";
        return switch (paths) {
            case DIRECT -> (rows == MoeRowPath.SM ? "direct stores by the SMs" : "copy engines") + asked
                    + ": every pair p2p or self";
            case HOST_TRANSFERS -> rows == MoeRowPath.SM ? "rings (through the proxy's triggers)" + asked
                    : "copy engines, host-queued transfers over the proxy (a few per peer and call, no trigger)" + asked;
            case RINGS -> "rings: an ibgda pair, whose puts the GPU posts, needs the ring protocol's credits";
        };
    }

    /**
     * The kernels of all ranks wait for each other, so every block of every rank on a GPU must be resident at once:
     * refuse a grid that might not be (one block per SM at worst: a 512-thread block of 128-register threads fills an
     * SM's registers), counted over all the ranks sharing the GPU. They also wait for the transports' streams, so each
     * stream on the GPU needs a hardware work queue of its own ({@link WorkQueueBudget}), the communication streams
     * the ranks are about to make counted in (before they exist: a refusal leaves nothing to undo).
     */
    private static void checkResidency(World world, HighThroughputPart part) {
        String queues = WorkQueueBudget.problem(world, part.communicationStream() ? 1 : 0);
        if (queues != null) {
            throw new IllegalArgumentException(queues);
        }
        for (Rank r : world.localRanks()) {
            int sms = r.device().multiprocessorCount();
            int sharing = world.ranksOnGpuOf(r.rank());
            long blocks = (long) sharing * HighThroughputRank.blocksPerRank(part);
            if (blocks > sms) {
                throw new IllegalArgumentException("MoeConfig numChannels (" + part.numChannels() + ") x 2 blocks x "
                        + sharing + " ranks on GPU " + r.device().ordinal() + " = " + blocks + " blocks, more than its "
                        + sms + " SMs can hold at once; their kernels wait for each other, so lower numChannels (at most "
                        + sms / (2 * sharing) + " here)");
            }
        }
    }

    public World world() {
        return world;
    }

    public HighThroughputSizing sizing() {
        return sizing;
    }

    /** What moves this buffer's rows in this world and why ("copy engines, host-queued transfers over the proxy ..."). */
    public String form() {
        return choice;
    }

    /** The heap region holding the rings and counters (the same offset on every rank). */
    public HeapBuffer heapRegion() {
        return region;
    }

    /** The calls of local rank {@code rank}. */
    public HighThroughputRank rank(int rank) {
        return ranks.rank(rank);
    }

    /**
     * {@code e} in the words of this part when the word it waited for is one of its signal words (the rank, the peer,
     * the channel and the counter), else null.
     */
    public TimedOutWait named(DeviceWaitTimeoutException e) {
        var rec = e.record();
        HighThroughputSizing.SignalWord w = rec == null ? null
                : sizing.signalWord(rec.offset() - region.offset() - sizing.signals());
        if (w == null) {
            return null;
        }
        return new TimedOutWait("rank " + rec.rank() + " waited for rank " + w.peer() + ": its " + w.counter()
                + (w.channel() < 0 ? "" : " in channel " + w.channel()) + " stayed at " + rec.seen()
                + ", expected at least " + rec.expected()
                + " after " + rec.elapsedNanos() / 1_000_000 + " ms; rank " + w.peer() + " is slow, failed, or never"
                + " joined this call (every rank must make the same dispatch/combine calls). " + e.getMessage(),
                rec.rank(), w.peer());
    }

    /**
     * Refuses every later call, waits for every rank's queued calls (a call waiting for a peer that never made it ends
     * at the device wait timeout), frees the ranks' device memory and streams, and returns the heap region to the
     * world's heap. When a wait fails the region stays reserved, since a kernel may still use it, and the failure is
     * thrown.
     */
    @Override
    public void close() {
        ranks.close();
    }
}
