package io.gda4j.moe;

import io.gda4j.moe.core.MoeShape;
import io.gda4j.moe.ht.HighThroughputPart;
import io.gda4j.moe.ht.MoeRowPath;
import io.gda4j.moe.ht.PeerPaths;
import io.gda4j.moe.ht.HighThroughputSizing;
import io.gda4j.moe.ll.LowLatencyPart;
import io.gda4j.moe.ll.LowLatencySizing;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.moe.tensor.Fp8BlockQuantizer;

import java.util.Objects;

/**
 * What a {@link MoeBuffer} is sized for: the model both modes route (hidden size, experts, top-k) and one part per
 * mode, as DeepEP's one {@code Buffer} serves both:
 * <ul>
 * <li>the <b>high-throughput</b> part (training and prefill: {@link MoeRank#layout}, {@link MoeRank#dispatch},
 *     {@link MoeRank#combine}): the element type of the dispatched rows, the most tokens a rank sends in one call, and
 *     how the kernels split the work (channels per rank, two thread blocks each; ring and chunk sizes in tokens);</li>
 * <li>the <b>low-latency</b> part (decoding: {@link MoeRank#lowLatencyDispatch}, {@link MoeRank#lowLatencyCombine}):
 *     its own token count and dispatch type ({@link Builder#lowLatency(int, ElementType)}).</li>
 * </ul>
 * A config has either part or both: {@link #builder()} starts with the high-throughput part,
 * {@link #lowLatencyBuilder()} with the low-latency part alone. Immutable; every value is checked when it is built,
 * naming the setter.
 *
 * <p>{@link #heapBytes(int)} says what a world of a given size needs of the symmetric heap, and {@link #sizing(int)} /
 * {@link #lowLatencySizing(int)} how each part lays it out.
 */
public final class MoeConfig {
    /** Channels (FP32 scales) per scale of an FP8 row: DeepEP's per-128-channel quantisation. */
    public static final int FP8_SCALE_BLOCK = Fp8BlockQuantizer.BLOCK;
    /** The most experts a token may be routed to: one lane of a warp per top-k slot. */
    public static final int MAX_TOP_K = MoeShape.MAX_TOP_K;
    /** The most ranks: a dispatch block has a warp per rank, and blocks hold at most 512 threads. */
    public static final int MAX_RANKS = MoeShape.MAX_RANKS;
    /** The most reducing warps a combine may use: its blocks hold at most 512 threads (128 registers each). */
    public static final int MAX_COMBINE_WARPS = HighThroughputPart.MAX_COMBINE_WARPS;
    /** The most channels: two blocks each, one per SM, so no GPU has room for more; a dispatch block keeps every
     * channel's first row at every rank in shared memory. */
    public static final int MAX_CHANNELS = HighThroughputPart.MAX_CHANNELS;

    private final int hidden;
    private final int numExperts;
    private final int topK;
    /** Null: no high-throughput part. */
    private final HighThroughputPart highThroughput;
    /** Null: no low-latency part. */
    private final LowLatencyPart lowLatency;

    private MoeConfig(Builder b) {
        this.hidden = b.hidden;
        this.numExperts = b.numExperts;
        this.topK = b.topK;
        this.highThroughput = b.highThroughput ? new HighThroughputPart(new MoeShape(b.hidden, b.maxTokensPerRank,
                b.numExperts, b.topK, Objects.requireNonNull(b.dtype, "dtype")), b.numChannels, b.chunkTokens,
                b.ringTokens, b.combineWarps, b.communicationStream, b.rowPath) : null;
        this.lowLatency = b.lowLatency ? new LowLatencyPart(new MoeShape(b.hidden, b.lowLatencyMaxTokensPerRank,
                b.numExperts, b.topK, Objects.requireNonNull(b.lowLatencyDispatchType, "dispatchType")),
                b.powerOfTwoScales) : null;
        if (highThroughput == null && lowLatency == null) {
            throw new IllegalArgumentException("MoeConfig has neither a high-throughput nor a low-latency part: start"
                    + " from MoeConfig.builder() (high throughput) or add lowLatency(maxTokensPerRank, dispatchType)");
        }
    }

    /** A builder with the high-throughput part (its defaults: {@link Builder}) and no low-latency part. */
    public static Builder builder() {
        return new Builder();
    }

    /** DeepEP's benchmark shape: the hidden size. */
    public static final int DEEP_EP_HIDDEN = 7168;
    /** DeepEP's benchmark shape: the experts. */
    public static final int DEEP_EP_EXPERTS = 256;
    /** DeepEP's benchmark shape: experts per token. */
    public static final int DEEP_EP_TOP_K = 8;
    /** DeepEP's high-throughput benchmark: tokens per rank. */
    public static final int DEEP_EP_TOKENS = 4096;
    /** DeepEP's low-latency benchmark: tokens per rank. */
    public static final int DEEP_EP_LOW_LATENCY_TOKENS = 128;

    /** DeepEP's benchmark configuration: 4096 tokens per rank, hidden 7168, top-8 of 256 experts, BF16. */
    public static Builder deepEpBuilder() {
        return builder().hidden(DEEP_EP_HIDDEN).dtype(ElementType.BF16).maxTokensPerRank(DEEP_EP_TOKENS)
                .numExperts(DEEP_EP_EXPERTS).topK(DEEP_EP_TOP_K);
    }

    /**
     * A builder with no high-throughput part: set the model and {@link Builder#lowLatency(int, ElementType)}. Add
     * the high-throughput part back with {@link Builder#highThroughput(boolean)}.
     */
    public static Builder lowLatencyBuilder() {
        return new Builder().highThroughput(false);
    }

    /**
     * DeepEP's low-latency benchmark: 128 tokens per rank, hidden 7168, top-8 of 256 experts, FP8 dispatch, and no
     * high-throughput part.
     */
    public static Builder deepEpLowLatencyBuilder() {
        return lowLatencyBuilder().hidden(DEEP_EP_HIDDEN).numExperts(DEEP_EP_EXPERTS).topK(DEEP_EP_TOP_K)
                .lowLatency(DEEP_EP_LOW_LATENCY_TOKENS, ElementType.FP8_E4M3);
    }

    /** A builder holding this config's values: change some and build another. */
    public Builder toBuilder() {
        Builder b = new Builder().hidden(hidden).numExperts(numExperts).topK(topK)
                .highThroughput(highThroughput != null).lowLatency(lowLatency != null);
        if (highThroughput != null) {
            b.dtype(highThroughput.dtype()).maxTokensPerRank(highThroughput.maxTokensPerRank())
                    .numChannels(highThroughput.numChannels()).chunkTokens(highThroughput.chunkTokens())
                    .ringTokens(highThroughput.ringTokens()).combineWarps(highThroughput.combineWarps())
                    .communicationStream(highThroughput.communicationStream()).rowPath(highThroughput.rowPath());
        }
        if (lowLatency != null) {
            b.lowLatencyMaxTokensPerRank = lowLatency.maxTokensPerRank();
            b.lowLatencyDispatchType = lowLatency.dispatchType();
            b.powerOfTwoScales = lowLatency.powerOfTwoScales();
        }
        return b;
    }

    /** Channels of a token's row (a multiple of 128). */
    public int hidden() {
        return hidden;
    }

    /** Experts of the model, split evenly over the ranks. */
    public int numExperts() {
        return numExperts;
    }

    /** Experts each token goes to (entries of its top-k row). */
    public int topK() {
        return topK;
    }

    /** Experts held by each rank: experts are split evenly, rank r holds [r * n, (r + 1) * n). */
    public int numLocalExperts(int worldSize) {
        return numExperts / worldSize;
    }

    /** Whether the buffer makes the high-throughput calls ({@link MoeRank#layout}, dispatch, combine). */
    public boolean hasHighThroughput() {
        return highThroughput != null;
    }

    /** Whether the buffer makes the low-latency calls ({@link MoeRank#lowLatencyDispatch}, lowLatencyCombine). */
    public boolean hasLowLatency() {
        return lowLatency != null;
    }

    /** High throughput: the element type rows are dispatched in (combine is always BF16). */
    public ElementType dtype() {
        return ht().dtype();
    }

    /** High throughput: the most tokens a rank sends in one call. */
    public int maxTokensPerRank() {
        return ht().maxTokensPerRank();
    }

    /**
     * High throughput: channels per rank; each is a contiguous range of each rank's tokens, served by two thread
     * blocks (one sends, one receives), so a rank's kernels take 2 x numChannels SMs.
     */
    public int numChannels() {
        return ht().numChannels();
    }

    /**
     * High throughput: the most rows one put carries over proxy/ibgda, and one tail signal announces (see
     * {@link HighThroughputPart#chunkTokens()} for what it costs over the proxy).
     */
    public int chunkTokens() {
        return ht().chunkTokens();
    }

    /** High throughput: rows of the receiver's ring per (channel, peer), the most rows a sender has in flight to it. */
    public int ringTokens() {
        return ht().ringTokens();
    }

    /** High throughput: warps of a combine block that reduce tokens (each one token at a time). */
    public int combineWarps() {
        return ht().combineWarps();
    }

    /**
     * High throughput: whether each {@link MoeRank} runs its calls on a communication stream of its own instead of the
     * rank's stream: see {@link MoeRank} for the ordering contract. Off by default.
     */
    public boolean communicationStream() {
        return ht().communicationStream();
    }

    /** High throughput: what moves the rows ({@link MoeRowPath}); AUTO by default. */
    public MoeRowPath rowPath() {
        return ht().rowPath();
    }

    /** Low latency: the most tokens a rank sends in one call. */
    public int lowLatencyMaxTokensPerRank() {
        return ll().maxTokensPerRank();
    }

    /** Low latency: the element type rows arrive in: BF16, or FP8_E4M3 with scales. Combine is always BF16. */
    public ElementType lowLatencyDispatchType() {
        return ll().dispatchType();
    }

    /** Low latency, FP8 only: scales rounded up to powers of two (UE8M0), see {@link Fp8BlockQuantizer}. */
    public boolean powerOfTwoScales() {
        return ll().powerOfTwoScales();
    }

    /**
     * Symmetric-heap bytes per rank a {@link MoeBuffer} of this config takes in any world of {@code worldSize} ranks,
     * both parts, in the worst case: what to give {@code WorldConfig.heapSizeBytes}, at least, for it alone. How a
     * world's pairs reach each other (p2p, the proxy, ibgda) is known only once it exists, and each way lays the heap
     * out differently, so this is the largest layout ({@link #sizing(int)}), plus the low-latency part with its
     * staging sections ({@link #lowLatencySizing(int)}). At DeepEP's shape (4096 tokens, hidden 7168, top-8 of 256,
     * BF16, the default channels and rings) that is the proxy's host transfers (the received rows in two regions that
     * calls alternate, the landing rows and every destination's staged rows, all in the heap): 589.0 MB per rank with
     * 2 ranks, 1178.0 MB with 4, 2355.9 MB with 8; a p2p world takes 353.5, 707.0 and 1414.0 MB (470.9, 941.9 and
     * 1883.8 MB with the copy-engine row path); DeepEP's low-latency part (128 tokens, FP8) takes 2017.6, 2080.2 and
     * 2190.2 MB per rank on top.
     */
    public long heapBytes(int worldSize) {
        long bytes = highThroughput == null ? 0 : sizing(worldSize).heapBytes();
        return lowLatency == null ? bytes : Math.addExact(bytes, lowLatencySizing(worldSize).heapBytes());
    }

    /**
     * What the high-throughput part needs at most in a world of {@code worldSize} ranks: of the layouts such a world
     * may have ({@link #sizing(int, PeerPaths)}: direct, host transfers over the proxy, or with rings), the one that
     * takes the most heap. Throws IllegalArgumentException when the experts do not split evenly over the ranks, or
     * when a size overflows the type the kernels index it with (the message names it), and IllegalStateException
     * without a high-throughput part.
     */
    public HighThroughputSizing sizing(int worldSize) {
        HighThroughputSizing most = null;
        for (PeerPaths p : PeerPaths.values()) {
            HighThroughputSizing s = sizing(worldSize, p);
            if (most == null || s.heapBytes() > most.heapBytes()) {
                most = s;
            }
        }
        return most;
    }

    /**
     * What the high-throughput part needs in a world of {@code worldSize} ranks that is direct ({@code direct}: every
     * pair of ranks p2p or self, as {@link MoeBuffer} finds it) or has rings (some pair ibgda).
     */
    public HighThroughputSizing sizing(int worldSize, boolean direct) {
        return ht().sizing(worldSize, direct);
    }

    /**
     * What the high-throughput part needs in a world of {@code worldSize} ranks whose pairs are {@code paths}, with
     * the row path it resolves to there ({@link MoeRowPath#resolve}).
     */
    public HighThroughputSizing sizing(int worldSize, PeerPaths paths) {
        return ht().sizing(worldSize, paths);
    }

    /**
     * What the low-latency part needs in a world of {@code worldSize} ranks at most: the largest of the sizing with
     * the staging sections that proxy and ibgda peers use and those of a world whose pairs are all direct under
     * either protocol, so the heap it names is enough for any world of that size. Throws IllegalArgumentException as
     * {@link #sizing(int)} does, and IllegalStateException without a low-latency part.
     */
    public LowLatencySizing lowLatencySizing(int worldSize) {
        return ll().mostSizing(worldSize);
    }

    /**
     * What the low-latency part needs in a world of {@code worldSize} ranks under the protocol asked for
     * ({@link LowLatencySizing.Protocol#requested()}); {@code staged}: whether some pair of its ranks is proxy or
     * ibgda (false: every pair is p2p or self, and the staging sections take no memory).
     */
    public LowLatencySizing lowLatencySizing(int worldSize, boolean staged) {
        return ll().sizing(worldSize, staged);
    }

    /** As {@link #lowLatencySizing(int, boolean)}, under {@code protocol} (where the world can run it). */
    public LowLatencySizing lowLatencySizing(int worldSize, boolean staged, LowLatencySizing.Protocol protocol) {
        return ll().sizing(worldSize, staged, protocol);
    }

    /** The high-throughput part, or null: what the buffer builds its high-throughput calls from. */
    HighThroughputPart highThroughputPart() {
        return highThroughput;
    }

    /** The low-latency part, or null. */
    LowLatencyPart lowLatencyPart() {
        return lowLatency;
    }

    private HighThroughputPart ht() {
        return present(highThroughput, NO_HIGH_THROUGHPUT);
    }

    private LowLatencyPart ll() {
        return present(lowLatency, NO_LOW_LATENCY);
    }

    /**
     * {@code part}, or IllegalStateException saying {@code missing} where it is null: how the config, the buffer and
     * the rank refuse what needs a part the config has not.
     */
    static <T> T present(T part, String missing) {
        if (part == null) {
            throw new IllegalStateException(missing);
        }
        return part;
    }

    /** Why a config (and its buffer) without a high-throughput part refuses its calls, and what to do. */
    static final String NO_HIGH_THROUGHPUT = "this MoeConfig has no high-throughput part: build it with"
            + " MoeConfig.builder() (or highThroughput(true) on a builder) to make layout, dispatch and combine";
    /** Why a config (and its buffer) without a low-latency part refuses its calls, and what to do. */
    static final String NO_LOW_LATENCY = "this MoeConfig has no low-latency part: build it with"
            + " lowLatency(maxTokensPerRank, dispatchType) to make the decoding calls on its MoeBuffer";

    @Override
    public String toString() {
        return "MoeConfig{hidden=" + hidden + ", numExperts=" + numExperts + ", topK=" + topK
                + (highThroughput == null ? "" : ", highThroughput={" + highThroughput + "}")
                + (lowLatency == null ? "" : ", lowLatency={" + lowLatency + "}") + "}";
    }

    /**
     * Sets the model, the high-throughput part's values (on unless {@code highThroughput(false)}) and the low-latency
     * part's (on once {@link #lowLatency(int, ElementType)} is called). High-throughput defaults: BF16,
     * {@value #DEFAULT_CHANNELS} channels, chunks of {@value #DEFAULT_CHUNK_TOKENS} rows, rings of
     * {@value #DEFAULT_RING_TOKENS} rows, {@value #DEFAULT_COMBINE_WARPS} combine warps, no communication stream;
     * low latency: no power-of-two scales.
     */
    public static final class Builder {
        /**
         * Channels per rank by default: 24 SMs, as DeepEP's tests use (64 SMs gained next to nothing at DeepEP's shape
         * on 2x H100). At most SMs / (2 x ranks per GPU): MoeBuffer refuses more, saying so.
         */
        public static final int DEFAULT_CHANNELS = 12;
        /** Rows per announced chunk by default (worlds with rings: ibgda pairs, or the proxy with rowPath SM). */
        public static final int DEFAULT_CHUNK_TOKENS = 32;
        /** Ring rows per (channel, peer) by default (worlds with rings). */
        public static final int DEFAULT_RING_TOKENS = 128;
        /**
         * Rows per chunk where each put costs the host a driver call (the proxy: every chunk is a trigger), which
         * larger chunks cut: with 2 ranks on H100s, 4096 tokens of hidden 7168, the BF16 dispatch took 1.9-2.5 ms with
         * chunks of 32 and rings of 128, 0.76 ms with 128 and 512 (one run).
         */
        public static final int FEW_PUTS_CHUNK_TOKENS = 128;
        /** Ring rows per (channel, peer) that hold several {@link #FEW_PUTS_CHUNK_TOKENS} chunks. */
        public static final int FEW_PUTS_RING_TOKENS = 512;
        /**
         * Combine warps by default: a token's reduction is one warp's chain of loads, so more warps reduce more tokens
         * at once (4096 tokens of hidden 7168, 2 ranks on one H100: combine 0.66 ms with 8, 0.43 ms with 16).
         */
        public static final int DEFAULT_COMBINE_WARPS = 16;

        private int hidden;
        private int numExperts;
        private int topK;
        private boolean highThroughput = true;
        private int maxTokensPerRank;
        private ElementType dtype = ElementType.BF16;
        private int numChannels = DEFAULT_CHANNELS;
        private int chunkTokens = DEFAULT_CHUNK_TOKENS;
        private int ringTokens = DEFAULT_RING_TOKENS;
        private int combineWarps = DEFAULT_COMBINE_WARPS;
        private boolean communicationStream;
        private MoeRowPath rowPath = MoeRowPath.AUTO;
        private boolean lowLatency;
        private int lowLatencyMaxTokensPerRank;
        private ElementType lowLatencyDispatchType = ElementType.BF16;
        private boolean powerOfTwoScales;

        private Builder() {
        }

        /** Channels of a token's row (a multiple of 128), in both parts. */
        public Builder hidden(int v) {
            hidden = v;
            return this;
        }

        /** Experts of the model, split evenly over the ranks, in both parts. */
        public Builder numExperts(int v) {
            numExperts = v;
            return this;
        }

        /** Experts each token goes to (entries of its top-k row), in both parts. */
        public Builder topK(int v) {
            topK = v;
            return this;
        }

        /** Whether the config has the high-throughput part (true from {@link #builder()}). */
        public Builder highThroughput(boolean v) {
            highThroughput = v;
            return this;
        }

        /** High throughput: the element type of the dispatched rows (BF16 or FP8_E4M3). */
        public Builder dtype(ElementType v) {
            dtype = v;
            return this;
        }

        /** High throughput: the most tokens a rank sends in one call. */
        public Builder maxTokensPerRank(int v) {
            maxTokensPerRank = v;
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
         * What moves the high-throughput rows: the SMs (over the proxy: the ring protocol), the copy engines (over the
         * proxy: host-queued transfers), or AUTO (the buffer's choice per world, the default; {@link MoeRowPath}).
         * COPY_ENGINE in a world with an ibgda pair is refused when the buffer is made.
         */
        public Builder rowPath(MoeRowPath v) {
            rowPath = v;
            return this;
        }

        /**
         * Gives the config a low-latency part (DeepEP's one {@code Buffer} for both modes): the decoding calls
         * {@link MoeRank#lowLatencyDispatch} and {@link MoeRank#lowLatencyCombine} on the same {@link MoeBuffer}, in
         * heap of their own ({@link MoeConfig#heapBytes} counts both). It routes the same model (hidden, experts,
         * top-k); its token count and dispatch type are its own (e.g. 128 tokens, FP8).
         */
        public Builder lowLatency(int maxTokensPerRank, ElementType dispatchType) {
            lowLatency = true;
            lowLatencyMaxTokensPerRank = maxTokensPerRank;
            lowLatencyDispatchType = dispatchType;
            return this;
        }

        /** Whether the config has the low-latency part ({@code false} drops one given before). */
        public Builder lowLatency(boolean v) {
            lowLatency = v;
            return this;
        }

        /** Low latency, FP8 only: scales rounded up to powers of two (UE8M0), see {@link Fp8BlockQuantizer}. */
        public Builder powerOfTwoScales(boolean v) {
            powerOfTwoScales = v;
            return this;
        }

        /** Throws IllegalArgumentException naming the setter for the first value out of range. */
        public MoeConfig build() {
            return new MoeConfig(this);
        }
    }
}
