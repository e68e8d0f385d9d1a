package io.gda4j.moe.ht;

import io.gda4j.moe.core.MoePart;
import io.gda4j.moe.core.MoeShape;
import io.gda4j.moe.tensor.ElementType;

/**
 * The high-throughput part of a MoeConfig (io.gda4j.moe.MoeConfig, which makes it): the shape of the dispatched rows
 * and how the kernels split the work (channels per rank, two thread blocks each; ring and chunk sizes in tokens),
 * checked when it is made. Immutable. The messages name the config's setters ({@code MoeConfig numChannels ...}).
 */
public final class HighThroughputPart extends MoePart {
    /** The config the messages name. */
    static final String OWNER = "MoeConfig";
    /** The most reducing warps a combine may use: its blocks hold at most 512 threads (128 registers each). */
    public static final int MAX_COMBINE_WARPS = 16;
    /** The most channels: two blocks each, one per SM, so no GPU has room for more; a dispatch block keeps every
     * channel's first row at every rank in shared memory. */
    public static final int MAX_CHANNELS = 128;

    private final int numChannels;
    private final int chunkTokens;
    private final int ringTokens;
    private final int combineWarps;
    private final boolean communicationStream;
    private final MoeRowPath rowPath;

    /** Throws IllegalArgumentException naming the field for the first value out of range. */
    public HighThroughputPart(MoeShape shape, int numChannels, int chunkTokens, int ringTokens, int combineWarps,
                              boolean communicationStream, MoeRowPath rowPath) {
        super(shape, OWNER, "maxTokensPerRank", "dtype");
        this.numChannels = numChannels;
        this.chunkTokens = chunkTokens;
        this.ringTokens = ringTokens;
        this.combineWarps = combineWarps;
        this.communicationStream = communicationStream;
        this.rowPath = java.util.Objects.requireNonNull(rowPath, "MoeConfig rowPath");
        positive("numChannels", numChannels);
        if (numChannels > MAX_CHANNELS) {
            throw new IllegalArgumentException("MoeConfig numChannels must be at most " + MAX_CHANNELS
                    + " (two thread blocks each, one per SM), got " + numChannels);
        }
        positive("chunkTokens", chunkTokens);
        positive("ringTokens", ringTokens);
        positive("combineWarps", combineWarps);
        if (chunkTokens > ringTokens) {
            throw new IllegalArgumentException("MoeConfig chunkTokens (" + chunkTokens + ") must not exceed ringTokens ("
                    + ringTokens + "): a chunk has to fit in the receiver's ring");
        }
        if (combineWarps > ringTokens) {
            throw new IllegalArgumentException("MoeConfig combineWarps (" + combineWarps + ") must not exceed ringTokens ("
                    + ringTokens + "): a combine round reads one row per warp from each ring before it grants credits");
        }
        if (combineWarps > MAX_COMBINE_WARPS) {
            throw new IllegalArgumentException("MoeConfig combineWarps must be at most " + MAX_COMBINE_WARPS
                    + " (the reducing block holds 16 warps), got " + combineWarps);
        }
    }

    private static void positive(String field, int value) {
        MoeShape.positive(OWNER, field, value);
    }

    /** The element type rows are dispatched in (combine is always BF16). */
    public ElementType dtype() {
        return shape().type();
    }

    /**
     * Channels per rank: each is a contiguous range of each rank's tokens, served by two thread blocks (one sends, one
     * receives), so a rank's kernels take 2 x numChannels SMs.
     */
    public int numChannels() {
        return numChannels;
    }

    /**
     * The most rows one put carries over proxy/ibgda, and one tail signal announces (a run of consecutive ring slots,
     * which may hold the rows of several of the dispatch's 32-token windows). Over the proxy every put is a trigger
     * whose copy and signal cost its proxy thread driver calls, so larger chunks pay there: with 2 ranks on H100s,
     * 4096 tokens of hidden 7168, the BF16 dispatch took 1.9-2.5 ms with chunks of 32 and rings of 128, 0.76 ms
     * with 128 and 512 (one run; {@code gda4j moe --transport proxy} takes 128 and 512, MoeConfig's FEW_PUTS_*).
     */
    public int chunkTokens() {
        return chunkTokens;
    }

    /** Rows of the receiver's ring per (channel, peer): the most rows a sender has in flight to it. */
    public int ringTokens() {
        return ringTokens;
    }

    /** Warps of a combine block that reduce tokens (each one token at a time). */
    public int combineWarps() {
        return combineWarps;
    }

    /** Whether each rank runs its calls on a communication stream of its own instead of the rank's stream. */
    public boolean communicationStream() {
        return communicationStream;
    }

    /** What moves the rows ({@link MoeRowPath}; what a world gets of it: {@link MoeRowPath#resolve}). */
    public MoeRowPath rowPath() {
        return rowPath;
    }

    /**
     * Why these rings could stall where some pair of ranks uses them (proxy or ibgda), or null. A combine round reads
     * up to combineWarps rows of a ring and grants them back only when every warp of the round is done, while a sender
     * needs free slots for a whole piece (up to chunkTokens rows) before it writes any: a warp of the round may wait
     * for a row of a piece whose sender waits for the slots the round's other rows hold. That cannot happen while
     * {@code chunkTokens + combineWarps - 1 <= ringTokens}; beyond it both may wait until the wait timeout. A direct
     * world (every pair p2p or self) has no rings, so {@link HighThroughputBuffer} asks only where it makes them.
     */
    public String ringProblem() {
        if (chunkTokens + combineWarps - 1 <= ringTokens) {
            return null;
        }
        return "MoeConfig chunkTokens (" + chunkTokens + ") + combineWarps (" + combineWarps + ") - 1 must not exceed"
                + " ringTokens (" + ringTokens + ") where a pair of ranks goes through rings (proxy or ibgda): a"
                + " combine round holds up to combineWarps rows of a ring until the round is done, and a sender needs"
                + " free slots for a whole chunk before it writes one. Raise ringTokens to at least "
                + (chunkTokens + combineWarps - 1) + ", or lower chunkTokens or combineWarps";
    }

    /**
     * What a world of {@code worldSize} ranks needs, for a direct world ({@code direct}: every pair of ranks p2p or
     * self) or one with rings (some pair ibgda). Throws IllegalArgumentException when the experts do not split evenly
     * over the ranks, or when a size overflows the type the kernels index it with (the message names it).
     */
    public HighThroughputSizing sizing(int worldSize, boolean direct) {
        return sizing(worldSize, direct ? PeerPaths.DIRECT : PeerPaths.RINGS);
    }

    /** What a world of {@code worldSize} ranks whose pairs are {@code paths} needs, with the row path it resolves to. */
    public HighThroughputSizing sizing(int worldSize, PeerPaths paths) {
        return sizing(worldSize, paths, rowPath.resolve(paths));
    }

    /**
     * What a world of {@code worldSize} ranks whose pairs are {@code paths} needs with the rows moved by {@code rows}
     * (a resolved path: SM or COPY_ENGINE; SM over the proxy is the ring protocol).
     */
    public HighThroughputSizing sizing(int worldSize, PeerPaths paths, MoeRowPath rows) {
        return new HighThroughputSizing(this, worldSize, paths, rows);
    }

    /** The part's own values (the model, hidden size, experts and top-k, is the config's). */
    @Override
    public String toString() {
        return "dtype=" + dtype() + ", maxTokensPerRank=" + maxTokensPerRank() + ", numChannels=" + numChannels
                + ", chunkTokens=" + chunkTokens + ", ringTokens=" + ringTokens + ", combineWarps=" + combineWarps
                + ", communicationStream=" + communicationStream + ", rowPath=" + rowPath;
    }
}
