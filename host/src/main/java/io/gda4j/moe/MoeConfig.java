package io.gda4j.moe;

import java.util.Optional;

/**
 * What a {@link MoeBuffer} is sized for: the hidden size and element type of the dispatched rows, the most tokens a
 * rank sends in one call, the experts and top-k, and how the kernels split the work (channels per rank, two thread
 * blocks each; ring and chunk sizes in tokens). Immutable; make one with {@link #builder()}.
 *
 * <p>{@link #sizing(int)} says what a world of a given size needs (heap bytes per rank, device bytes per rank) and
 * refuses a configuration whose sizes overflow any index type the kernels use, naming the field.
 */
public final class MoeConfig extends MoeShapeConfig {
    /** Channels (FP32 scales) per scale of an FP8 row: DeepEP's per-128-channel quantisation. */
    public static final int FP8_SCALE_BLOCK = 128;
    /** The most experts a token may be routed to: one lane of a warp per top-k slot. */
    public static final int MAX_TOP_K = 32;
    /** The most ranks: a dispatch block has a warp per rank, and blocks hold at most 512 threads. */
    public static final int MAX_RANKS = 16;
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
    private final MoeLowLatencyConfig lowLatency;

    private MoeConfig(Builder b) {
        super(b, "MoeConfig", "dtype");
        this.numChannels = b.numChannels;
        this.chunkTokens = b.chunkTokens;
        this.ringTokens = b.ringTokens;
        this.combineWarps = b.combineWarps;
        this.communicationStream = b.communicationStream;
        this.rowPath = java.util.Objects.requireNonNull(b.rowPath, "MoeConfig rowPath");
        this.lowLatency = b.lowLatency;
        if (lowLatency != null && (lowLatency.hidden() != hidden() || lowLatency.numExperts() != numExperts()
                || lowLatency.topK() != topK())) {
            throw new IllegalArgumentException("MoeConfig lowLatency must route the same model: hidden "
                    + lowLatency.hidden() + ", numExperts " + lowLatency.numExperts() + ", topK " + lowLatency.topK()
                    + " against hidden " + hidden() + ", numExperts " + numExperts() + ", topK " + topK() + " here (its"
                    + " maxTokensPerRank and dispatch type are its own)");
        }
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
        MoeShape.positive("MoeConfig", field, value);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** DeepEP's benchmark configuration: 4096 tokens per rank, hidden 7168, top-8 of 256 experts, BF16. */
    public static Builder deepEpBuilder() {
        return builder().hidden(7168).dtype(ElementType.BF16).maxTokensPerRank(4096).numExperts(256).topK(8);
    }

    public Builder toBuilder() {
        return shapeInto(new Builder()).numChannels(numChannels).chunkTokens(chunkTokens).ringTokens(ringTokens)
                .combineWarps(combineWarps).communicationStream(communicationStream).rowPath(rowPath).lowLatency(lowLatency);
    }

    public ElementType dtype() {
        return type();
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
     * with 128 and 512 (one run; {@code gda4j moe --transport proxy} takes 128 and 512).
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

    /**
     * Whether each {@link MoeRank} runs its calls on a communication stream of its own instead of the rank's stream:
     * see {@link MoeRank} for the ordering contract. Off by default.
     */
    public boolean communicationStream() {
        return communicationStream;
    }

    /** What moves the rows in a direct world ({@link MoeRowPath}); AUTO by default. */
    public MoeRowPath rowPath() {
        return rowPath;
    }

    /**
     * Why these rings could stall where some pair of ranks uses them (proxy or ibgda), or null. A combine round reads
     * up to combineWarps rows of a ring and grants them back only when every warp of the round is done, while a
     * sender needs free slots for a whole piece (up to chunkTokens rows) before it writes any: a warp of the round
     * may wait for a row of a piece whose sender waits for the slots the round's other rows hold. That cannot happen
     * while chunkTokens + combineWarps - 1 <= ringTokens; beyond it both may wait until the wait timeout. A direct
     * world (every pair p2p or self) has no rings, so {@link MoeBuffer} asks only where it makes them.
     */
    String ringProblem() {
        if (chunkTokens + combineWarps - 1 <= ringTokens) {
            return null;
        }
        return "MoeConfig chunkTokens (" + chunkTokens + ") + combineWarps (" + combineWarps + ") - 1 must not exceed"
                + " ringTokens (" + ringTokens + ") where a pair of ranks goes through rings (proxy or ibgda): a"
                + " combine round holds up to combineWarps rows of a ring until the round is done, and a sender needs"
                + " free slots for a whole chunk before it writes one. Raise ringTokens to at least "
                + (chunkTokens + combineWarps - 1) + ", or lower chunkTokens or combineWarps";
    }

    /** Experts held by each rank: experts are split evenly, rank r holds [r * n, (r + 1) * n). */
    public int numLocalExperts(int worldSize) {
        return numExperts() / worldSize;
    }

    /** The low-latency part {@link MoeBuffer} also makes ({@link Builder#lowLatency}), if any. */
    public Optional<MoeLowLatencyConfig> lowLatency() {
        return Optional.ofNullable(lowLatency);
    }

    /**
     * Symmetric-heap bytes per rank a {@link MoeBuffer} of this config takes in a world of {@code worldSize} ranks
     * (the worst case: a world with rings and staging), its low-latency part included: what to give
     * {@code WorldConfig.heapSizeBytes}, at least, for it alone.
     */
    public long heapBytes(int worldSize) {
        long bytes = sizing(worldSize).heapBytes();
        return lowLatency == null ? bytes : Math.addExact(bytes, lowLatency.sizing(worldSize).heapBytes());
    }

    /**
     * What a world of {@code worldSize} ranks needs. Throws IllegalArgumentException when the experts do not split
     * evenly over the ranks, or when a size overflows the type the kernels index it with (the message names it).
     */
    public MoeSizing sizing(int worldSize) {
        return sizing(worldSize, false);
    }

    /**
     * As {@link #sizing(int)}, for a direct world ({@code direct}: every pair of ranks p2p or self, as
     * {@link MoeBuffer} finds it) or one with rings.
     */
    public MoeSizing sizing(int worldSize, boolean direct) {
        return new MoeSizing(this, worldSize, direct, rowPath.resolve(direct) == MoeRowPath.COPY_ENGINE);
    }

    @Override
    public String toString() {
        return "MoeConfig{hidden=" + hidden() + ", dtype=" + dtype() + ", maxTokensPerRank=" + maxTokensPerRank()
                + ", numExperts=" + numExperts() + ", topK=" + topK() + ", numChannels=" + numChannels + ", chunkTokens="
                + chunkTokens + ", ringTokens=" + ringTokens + ", combineWarps=" + combineWarps
                + ", communicationStream=" + communicationStream + ", rowPath=" + rowPath
                + (lowLatency == null ? "" : ", lowLatency=" + lowLatency) + "}";
    }

    /** Defaults: BF16, 8 channels, chunks of 16 rows, rings of 64 rows, 8 combine warps, no communication stream. */
    public static final class Builder extends MoeShapeBuilder<Builder> {
        private int numChannels = 8;
        private int chunkTokens = 16;
        private int ringTokens = 64;
        // 16: a token's reduction is one warp's chain of loads, so more warps reduce more tokens at once (4096
        // tokens of hidden 7168, 2 ranks on one H100: combine 0.66 ms with 8, 0.43 ms with 16).
        private int combineWarps = 16;
        private boolean communicationStream;
        private MoeRowPath rowPath = MoeRowPath.AUTO;
        private MoeLowLatencyConfig lowLatency;

        @Override
        Builder self() {
            return this;
        }

        public Builder dtype(ElementType v) {
            type = v;
            return this;
        }

        public Builder numChannels(int v) {
            numChannels = v;
            return this;
        }

        public Builder chunkTokens(int v) {
            chunkTokens = v;
            return this;
        }

        public Builder ringTokens(int v) {
            ringTokens = v;
            return this;
        }

        public Builder combineWarps(int v) {
            combineWarps = v;
            return this;
        }

        /**
         * Runs each rank's layout, dispatch and combine on a communication stream the rank owns, so the caller's work
         * on the rank's stream can overlap them (DeepEP's {@code async_finish} with {@code allocate_on_comm_stream}):
         * each call waits for the rank's stream, and the rank's stream waits for a call only when told to
         * ({@link MoeRank#computeStreamWaitForLastCall()}). One more stream per rank on its GPU's work queues.
         */
        public Builder communicationStream(boolean v) {
            communicationStream = v;
            return this;
        }

        /**
         * What moves the rows in a direct world: the SMs, the copy engines, or AUTO (the buffer's choice per world, the
         * default; {@link MoeRowPath}). COPY_ENGINE in a world with a proxy or ibgda pair is refused when the buffer is
         * made.
         */
        public Builder rowPath(MoeRowPath v) {
            rowPath = v;
            return this;
        }

        /**
         * Gives the buffer a low-latency part as well (DeepEP's one {@code Buffer} for both modes): the decoding calls
         * {@link MoeRank#lowLatencyDispatch} and {@link MoeRank#lowLatencyCombine} on the same {@link MoeBuffer}, in
         * heap of their own ({@link #heapBytes} counts both). {@code v} must route the same model (hidden, experts,
         * top-k); its token count and dispatch type are its own (e.g. 128 tokens, FP8). Null: none (the default).
         */
        public Builder lowLatency(MoeLowLatencyConfig v) {
            lowLatency = v;
            return this;
        }

        public MoeConfig build() {
            return new MoeConfig(this);
        }
    }
}
