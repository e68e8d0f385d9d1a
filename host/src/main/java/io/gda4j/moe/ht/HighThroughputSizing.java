package io.gda4j.moe.ht;

import io.gda4j.moe.core.ExactSizes;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.moe.tensor.Fp8BlockQuantizer;

/**
 * The sizes and offsets a {@link HighThroughputPart} needs in a world of {@code worldSize} ranks, computed once with
 * exact arithmetic: a size that overflows is refused with a message naming it (DeepEP's complaint: silent 32-bit
 * overflow). Row counts and row lengths must fit the kernels' 32-bit ints; byte offsets are 64-bit everywhere.
 *
 * <p>A dispatched row (the unit of the dispatch rings):
 * <pre>
 *   0                      payload: hidden x element (BF16 2 B, FP8 1 B)
 *   scalesOffset           FP8 only: hidden / 128 FP32 scales (16-byte aligned)
 *   metaOffset             int32 source token, int32 source rank, int32 topk[K], float32 weights[K] (16-byte aligned)
 *   dispatchRowBytes       = metaOffset + align16(8 + 8 K)
 * </pre>
 * A combined row is the BF16 hidden state alone ({@code combineRowBytes = 2 hidden}).
 *
 * <p>The heap region (one allocation, the same offsets on every rank; C channels, N ranks, R ring rows, T
 * maxTokensPerRank, L local experts). A world whose pairs are all p2p or self is <em>direct</em>: rows go straight to
 * their final place at the peer, so it has no rings and holds the received tensors and the combine's landing rows in
 * the heap instead; any other world has the rings and sizes the direct sections 0:
 * <pre>
 *   dispatchRecvRing    [C][N source][R][dispatchRowBytes]   written by the peers
 *   dispatchSendStage   [C][N dest][R][dispatchRowBytes]     proxy/ibgda: rows packed here, then one put per run
 *   combineRecvRing     [C][N source][R][combineRowBytes]
 *   combineSendStage    [C][N dest][R][combineRowBytes]
 *   directRecv          direct: [2 region] recvX .. recvSrc, laid out as in device memory below (directRecvBytes
 *                       each), written by the peers; dispatch number g (the host's count) uses region g % 2
 *   combineLanding      direct: [N expert rank][T][combineRowBytes], written by the peers; a combine that pulls
 *                       reads this rank's expert outputs here instead (io.gda4j.moe.MoeRank#combineInput(), N x T rows)
 *   ceLanding           copy engines: [N expert rank][T][combineRowBytes], each rank's rows as this rank packed
 *                       them for it, copied there by the rank's copy engine
 *   stage*              host transfers (the copy engines over the proxy): the staging arrays, [N dest][T] rows of
 *                       each received array, in the heap (a NIC's WRITE reads only the heap) instead of device memory
 *   hostDirectState     host transfers: the direct state words, in the heap (its sequence words are the signals'
 *                       sources); device memory has them elsewhere
 *   expertTable         direct: [2 exchange parity][N source][L] i32, each source's tokens per local expert; host
 *                       transfers add [2 exchange parity][N dest][L], this rank's share for each peer, put from here
 *   signals (u64)       dispatchCount[2 parity][C][N source], dispatchTail[C][N source], dispatchCredit[C][N dest],
 *                       combineTail[C][N source], combineCredit[C][N dest],
 *                       directCount[2 parity][N source][N dest], dispatchDone[N source], combineEntry[N source],
 *                       combineDone[N source], dispatchEntry[N source]
 * </pre>
 * Device memory of each rank (not in the heap; offsets from its start): params, layout, channel state (rings:
 * [4][C][N] u64 positions; a direct world: the dispatch's work counters, u64 [2 parity]), counts, the layout
 * exchange's blocks (direct: [2 parity], {@link #exchangeBlockBytes()} each), the direct state words, the copy
 * engines' staging arrays ([N dest][T] rows of each received array), the combined rows, then the received tensors
 * (recvX .. recvSrc), which a direct world keeps in the heap instead (its device memory ends where they would start).
 * A direct world also has a host block per exchange parity in mapped memory ({@link #exchangeHostBytes()}).
 *
 * <p>Three layouts, by how the ranks reach each other ({@link PeerPaths}) and the row path they resolve to: the rings
 * (some pair ibgda, or the proxy with the rows forced to the SMs), direct (every pair p2p or self; the copy engines add
 * their landing rows and staging), and host transfers (the proxy with the copy engines: direct's sections, the
 * staging and the direct state in the heap, and the expert table's outgoing half).
 */
public final class HighThroughputSizing {

    private final HighThroughputPart config;
    private final int worldSize;
    private final int numLocalExperts;
    private final int maxRecvTokens;
    private final int payloadBytes;
    private final int scalesPerRow;
    private final int scalesOffset;
    private final int metaOffset;
    private final int dispatchRowBytes;
    private final int combineRowBytes;
    private final int signalWords;
    private final boolean direct;
    private final boolean copyEngine;
    private final boolean hostTransfers;
    private final PeerPaths paths;
    private final int exchangeWords;

    // heap offsets, relative to the region's start
    private final long dispatchRecvRing;
    private final long dispatchSendStage;
    private final long combineRecvRing;
    private final long combineSendStage;
    private final long directRecv;
    private final long directRecvBytes;
    private final long combineLanding;
    private final long ceLanding;
    private final long hostDirectState;
    private final long expertTable;
    private final long signals;
    private final long heapBytes;

    // device memory offsets
    private final long params;
    private final long tokenSlot;
    private final long channelCount;
    private final long tokensPerRank;
    private final long tokensPerExpert;
    private final long layoutStatus;
    /** The dispatch sequence number, raised on the GPU before each dispatch (so graph replays are new calls). */
    private final long callSeq;
    /** The combine sequence number (direct worlds), raised on the GPU before each combine. */
    private final long combineSeq;
    private final long state;
    private final long recvChannelOffset;
    private final long recvChannelCount;
    private final long recvTotal;
    private final long localExpertCounts;
    private final long exchange;
    private final long directState;
    private final long stageX;
    private final long stageScales;
    private final long stageTopkIdx;
    private final long stageTopkWeights;
    private final long stageSrc;
    private final long recvX;
    private final long recvScales;
    private final long recvTopkIdx;
    private final long recvTopkWeights;
    private final long recvSrc;
    private final long combined;
    private final long recvEnd;
    private final long waitNanos;
    private final long deviceBytes;

    /**
     * The sizes of {@code c} in a world of {@code worldSize} ranks whose pairs are {@code paths}, its rows moved by
     * {@code rows} (resolved: SM or COPY_ENGINE; SM where a pair is not direct means the rings).
     */
    HighThroughputSizing(HighThroughputPart c, int worldSize, PeerPaths paths, MoeRowPath rows) {
        ExactSizes x = new ExactSizes(HighThroughputPart.OWNER);
        c.shape().checkWorld(HighThroughputPart.OWNER, worldSize);
        if (rows == MoeRowPath.AUTO) {
            throw new IllegalArgumentException("a sizing needs a resolved row path (SM or COPY_ENGINE), got AUTO");
        }
        boolean throughRings = paths == PeerPaths.RINGS || rows == MoeRowPath.SM && paths == PeerPaths.HOST_TRANSFERS;
        if (rows == MoeRowPath.COPY_ENGINE && paths == PeerPaths.RINGS) {
            throw new IllegalArgumentException("MoeConfig rowPath COPY_ENGINE needs every pair of ranks to be p2p, self or"
                    + " proxy; this world has an ibgda pair, whose rows go through rings: use AUTO or SM");
        }
        this.config = c;
        this.worldSize = worldSize;
        this.paths = paths;
        this.direct = !throughRings;
        this.copyEngine = direct && rows == MoeRowPath.COPY_ENGINE;
        this.hostTransfers = copyEngine && paths == PeerPaths.HOST_TRANSFERS;
        this.numLocalExperts = c.numExperts() / worldSize;
        this.maxRecvTokens = x.toInt("maxRecvTokens (worldSize x maxTokensPerRank)", x.mul("maxRecvTokens", worldSize, c.maxTokensPerRank()));
        this.payloadBytes = x.toInt("payload bytes per row (hidden x element bytes)", x.mul("payload bytes", c.hidden(), c.dtype().bytes()));
        this.scalesPerRow = c.dtype() == ElementType.FP8_E4M3 ? c.hidden() / Fp8BlockQuantizer.BLOCK : 0;
        this.scalesOffset = payloadBytes;
        this.metaOffset = x.toInt("row meta offset",
                x.add("row meta offset", scalesOffset, ExactSizes.align(4L * scalesPerRow, 16)));
        this.dispatchRowBytes = x.toInt("dispatchRowBytes", x.add("dispatchRowBytes", metaOffset, ExactSizes.align(8 + 8L * c.topK(), 16)));
        this.combineRowBytes = x.toInt("combineRowBytes (2 x hidden)", x.mul("combineRowBytes", 2, c.hidden()));
        long pairs = x.mul("channels x ranks", c.numChannels(), worldSize);
        x.toInt("channels x ranks", pairs);
        long ringRows = x.mul("ring rows per rank (channels x ranks x ringTokens)", pairs, c.ringTokens());
        x.toInt("ring rows per rank (channels x ranks x ringTokens)", ringRows);
        this.signalWords = x.toInt("signal words", x.add("signal words", x.mul("signal words", pairs, 6),
                (long) worldSize * (2L * worldSize + 4)));
        this.exchangeWords = x.toInt("layout exchange words", x.add("layout exchange words", x.mul("layout exchange"
                + " words", pairs, 1), 4L * worldSize + 1 + numLocalExperts));
        long rings = direct ? 0 : ringRows;

        long d = 0;
        params = d;
        d = x.next(d, "params", MoeParamsDescriptor.LENGTH);
        tokenSlot = d;
        d = x.next(d, "token slots (maxTokensPerRank x ranks x 4)", x.mul("token slots", x.mul("token slots", c.maxTokensPerRank(), worldSize), 4));
        channelCount = d;
        d = x.next(d, "channel counts", 4 * pairs);
        tokensPerRank = d;
        d = x.next(d, "tokens per rank", 4L * worldSize);
        tokensPerExpert = d;
        d = x.next(d, "tokens per expert", 4L * c.numExperts());
        layoutStatus = d;
        d = x.next(d, "layout status", 16);
        callSeq = d;
        d = x.next(d, "dispatch sequence number", 8);
        combineSeq = d;
        d = x.next(d, "combine sequence number", 8);
        state = d;
        d = x.next(d, "channel state", x.mul("channel state", pairs, 32));
        waitNanos = d;
        d = x.next(d, "wait time per peer", 8L * worldSize);
        recvChannelOffset = d;
        d = x.next(d, "receive channel offsets", 4 * pairs);
        recvChannelCount = d;
        d = x.next(d, "receive channel counts", 4 * pairs);
        recvTotal = d;
        d = x.next(d, "receive total", 16);
        localExpertCounts = d;
        d = x.next(d, "local expert counts", 4L * numLocalExperts);
        exchange = d;
        d = x.next(d, "layout exchange blocks", direct ? 2 * exchangeBlockBytes() : 0);
        long deviceDirectState = d;
        d = x.next(d, "direct state words", direct && !hostTransfers ? 8L * DIRECT_STATE_WORDS : 0);
        long staged = copyEngine ? x.mul("staged rows (ranks x maxTokensPerRank)", worldSize, c.maxTokensPerRank()) : 0;
        // Host transfers keep the staging arrays in the heap: the device's sections take no bytes.
        long[] deviceStage = new long[5];
        d = stageSections(x, d, hostTransfers ? 0 : staged, deviceStage);
        combined = d;
        d = x.next(d, "combined rows (maxTokensPerRank x 2 hidden)", x.mul("combined rows", c.maxTokensPerRank(), combineRowBytes));
        recvX = d;
        d = x.next(d, "received rows (maxRecvTokens x payload)", x.mul("received rows", maxRecvTokens, payloadBytes));
        recvScales = d;
        d = x.next(d, "received scales", x.mul("received scales", maxRecvTokens, 4L * scalesPerRow));
        recvTopkIdx = d;
        d = x.next(d, "received top-k indices", x.mul("received top-k indices", maxRecvTokens, 4L * c.topK()));
        recvTopkWeights = d;
        d = x.next(d, "received top-k weights", x.mul("received top-k weights", maxRecvTokens, 4L * c.topK()));
        recvSrc = d;
        recvEnd = x.next(d, "received sources", x.mul("received sources", maxRecvTokens, 8));
        deviceBytes = direct ? recvX : recvEnd;

        long at = 0;
        dispatchRecvRing = at;
        at = x.next(at, "dispatch receive ring bytes", x.mul("dispatch receive ring bytes", rings, dispatchRowBytes));
        dispatchSendStage = at;
        at = x.next(at, "dispatch send staging bytes", x.mul("dispatch send staging bytes", rings, dispatchRowBytes));
        combineRecvRing = at;
        at = x.next(at, "combine receive ring bytes", x.mul("combine receive ring bytes", rings, combineRowBytes));
        combineSendStage = at;
        at = x.next(at, "combine send staging bytes", x.mul("combine send staging bytes", rings, combineRowBytes));
        directRecv = at;
        directRecvBytes = direct ? ExactSizes.align(recvEnd - recvX, ExactSizes.SECTION_ALIGN) : 0;
        at = x.next(at, "received tensors in the heap (two regions)", x.mul("received tensors", 2, directRecvBytes));
        combineLanding = at;
        long landingRows = direct ? x.mul("combine landing rows", worldSize, c.maxTokensPerRank()) : 0;
        at = x.next(at, "combine landing rows", x.mul("combine landing bytes", landingRows, combineRowBytes));
        ceLanding = at;
        at = x.next(at, "copy-engine landing rows", x.mul("copy-engine landing bytes", copyEngine ? landingRows : 0,
                combineRowBytes));
        long[] heapStage = new long[5];
        at = stageSections(x, at, hostTransfers ? staged : 0, heapStage);
        long[] stage = hostTransfers ? heapStage : deviceStage;
        stageX = stage[0];
        stageScales = stage[1];
        stageTopkIdx = stage[2];
        stageTopkWeights = stage[3];
        stageSrc = stage[4];
        hostDirectState = at;
        at = x.next(at, "direct state words (host transfers)", hostTransfers ? 8L * DIRECT_STATE_WORDS : 0);
        directState = hostTransfers ? hostDirectState : deviceDirectState;
        expertTable = at;
        at = x.next(at, "expert table", direct ? x.mul("expert table", (hostTransfers ? 16L : 8L) * worldSize,
                numLocalExperts) : 0);
        signals = at;
        heapBytes = x.next(at, "signal bytes", 8L * signalWords);
    }

    /**
     * The staging arrays' sections from {@code at}, {@code staged} rows each ([N dest][T]): their offsets into
     * {@code offsets} (x, scales, top-k indices, top-k weights, sources); returns where the next section starts.
     */
    private long stageSections(ExactSizes x, long at, long staged, long[] offsets) {
        long[] rowBytes = {payloadBytes, 4L * scalesPerRow, 4L * config.topK(), 4L * config.topK(), 8};
        String[] names = {"staged rows", "staged scales", "staged top-k indices", "staged top-k weights",
            "staged sources"};
        for (int i = 0; i < 5; i++) {
            offsets[i] = at;
            at = x.next(at, names[i], x.mul(names[i], staged, rowBytes[i]));
        }
        return at;
    }

    public HighThroughputPart config() {
        return config;
    }

    /** How the world's pairs reach each other, as this sizing was made for. */
    public PeerPaths paths() {
        return paths;
    }

    public int worldSize() {
        return worldSize;
    }

    public int numLocalExperts() {
        return numLocalExperts;
    }

    /** Rows a rank can receive in one dispatch: every rank sending it every token. */
    public int maxRecvTokens() {
        return maxRecvTokens;
    }

    public int payloadBytes() {
        return payloadBytes;
    }

    public int scalesPerRow() {
        return scalesPerRow;
    }

    public int scalesOffset() {
        return scalesOffset;
    }

    public int metaOffset() {
        return metaOffset;
    }

    public int dispatchRowBytes() {
        return dispatchRowBytes;
    }

    public int combineRowBytes() {
        return combineRowBytes;
    }

    /** Symmetric-heap bytes per rank (256-byte aligned sections). */
    public long heapBytes() {
        return heapBytes;
    }

    /** Device bytes per rank outside the heap: layout, channel state and the output tensors. */
    public long deviceBytes() {
        return deviceBytes;
    }

    public long dispatchRecvRing() {
        return dispatchRecvRing;
    }

    public long dispatchSendStage() {
        return dispatchSendStage;
    }

    public long combineRecvRing() {
        return combineRecvRing;
    }

    public long combineSendStage() {
        return combineSendStage;
    }

    /** Heap offset of the received tensors in a direct world (a section of 0 bytes otherwise). */
    public long directRecv() {
        return directRecv;
    }

    /** Heap offset of the combine's landing rows in a direct world (a section of 0 bytes otherwise). */
    public long combineLanding() {
        return combineLanding;
    }

    /**
     * Whether the direct protocol runs (no rings): every pair of ranks is p2p or self, or reached by host transfers
     * with the copy engines moving the rows ({@link #hostTransfers()}); rows go straight to their place.
     */
    public boolean direct() {
        return direct;
    }

    /** Whether the copy engines move the rows (the SMs pack and sum): the direct protocol only. */
    public boolean copyEngine() {
        return copyEngine;
    }

    /**
     * Whether some pair's rows go by host-queued transfers (the copy engines over the proxy): the staging arrays and
     * the direct state are in the heap ({@link #stageX()}, {@link #directState()} are heap offsets), and no combine
     * pulls from the peers' heaps.
     */
    public boolean hostTransfers() {
        return hostTransfers;
    }

    /** Bytes of one region of the received tensors in a direct world's heap (there are two), else 0. */
    public long directRecvBytes() {
        return directRecvBytes;
    }

    /** Heap offset of the copy engines' landing rows (a section of 0 bytes unless {@link #copyEngine()}). */
    public long ceLanding() {
        return ceLanding;
    }

    /**
     * Heap offset of the layout exchange's per-expert table (direct worlds); with host transfers this rank's outgoing
     * shares follow it, at {@code expertTable() + 8 N L} ({@code [2 parity][N dest][L]} i32).
     */
    public long expertTable() {
        return expertTable;
    }

    /** u64 words of the direct state (gda4j/moe/params.cuh: DSTATE_WORDS). */
    public static final int DIRECT_STATE_WORDS = 8;
    /** The direct state word the copy-engine dispatch publishes its sequence in, for the host's copies (DSTATE_*). */
    public static final int DSTATE_DISPATCH_SEQ = 3;
    /** The direct state word the copy-engine combine publishes its sequence in. */
    public static final int DSTATE_COMBINE_SEQ = 4;

    /** i32 words of one layout exchange block (gda4j/moe/params.cuh: ExchangeIndex, the same formulas). */
    public int exchangeWords() {
        return exchangeWords;
    }

    public int exchangeFirstRowWord(int channel, int dest) {
        return channel * worldSize + dest;
    }

    public int exchangeDestBaseWord(int dest) {
        return config.numChannels() * worldSize + dest;
    }

    public int exchangeDestRowsWord(int dest) {
        return config.numChannels() * worldSize + worldSize + dest;
    }

    public int exchangeSrcBaseWord(int source) {
        return config.numChannels() * worldSize + 2 * worldSize + source;
    }

    public int exchangeSrcRowsWord(int source) {
        return config.numChannels() * worldSize + 3 * worldSize + source;
    }

    public int exchangeRecvTotalWord() {
        return config.numChannels() * worldSize + 4 * worldSize;
    }

    public int exchangeExpertCountWord(int expert) {
        return exchangeRecvTotalWord() + 1 + expert;
    }

    /** Bytes of one device block of the exchange (a multiple of 256). */
    public long exchangeBlockBytes() {
        return ExactSizes.align(4L * exchangeWords, 256);
    }

    /** Bytes of one host block of the exchange: the u64 stamp, then the words (a multiple of 256). */
    public long exchangeHostBlockBytes() {
        return ExactSizes.align(8 + 4L * exchangeWords, 256);
    }

    /** Mapped host bytes a direct world's rank needs for the exchange's host blocks (two), else 0. */
    public long exchangeHostBytes() {
        return direct ? 2 * exchangeHostBlockBytes() : 0;
    }

    public long exchange() {
        return exchange;
    }

    /** The direct state words: a device offset, or a heap-region offset where {@link #hostTransfers()}. */
    public long directState() {
        return directState;
    }

    /** Heap offset of the direct state words of host transfers (a section of 0 bytes otherwise). */
    public long hostDirectState() {
        return hostDirectState;
    }

    /**
     * Offsets of the copy engines' staging arrays, [N dest][T rows] each (0 bytes unless copy engines): in device
     * memory, or in the heap region where {@link #hostTransfers()}.
     */
    public long stageX() {
        return stageX;
    }

    public long stageScales() {
        return stageScales;
    }

    public long stageTopkIdx() {
        return stageTopkIdx;
    }

    public long stageTopkWeights() {
        return stageTopkWeights;
    }

    public long stageSrc() {
        return stageSrc;
    }

    public long signals() {
        return signals;
    }

    /** Index of a signal word within the signal section (the kernels compute the same in gda4j/moe/params.cuh). */
    public int dispatchCountWord(int parity, int channel, int source) {
        return (parity * config.numChannels() + channel) * worldSize + source;
    }

    public int dispatchTailWord(int channel, int source) {
        return (2 * config.numChannels() + channel) * worldSize + source;
    }

    public int dispatchCreditWord(int channel, int dest) {
        return (3 * config.numChannels() + channel) * worldSize + dest;
    }

    public int combineTailWord(int channel, int source) {
        return (4 * config.numChannels() + channel) * worldSize + source;
    }

    public int combineCreditWord(int channel, int dest) {
        return (5 * config.numChannels() + channel) * worldSize + dest;
    }

    /** The direct worlds' count word: {@code source}'s rows for {@code dest} in calls of this parity. */
    public int directCountWord(int parity, int source, int dest) {
        return 6 * config.numChannels() * worldSize + (parity * worldSize + source) * worldSize + dest;
    }

    public int dispatchDoneWord(int source) {
        return 6 * config.numChannels() * worldSize + 2 * worldSize * worldSize + source;
    }

    public int combineEntryWord(int source) {
        return dispatchDoneWord(0) + worldSize + source;
    }

    public int combineDoneWord(int source) {
        return dispatchDoneWord(0) + 2 * worldSize + source;
    }

    public int dispatchEntryWord(int source) {
        return dispatchDoneWord(0) + 3 * worldSize + source;
    }

    /** A signal word by name: what it counts, its channel, and the peer on the other side. */
    public record SignalWord(String counter, int channel, int peer) {
    }

    /**
     * Which word lies at {@code offset} bytes into the signal section, or null when none does: how a device timeout
     * on a heap offset becomes "waited for rank p's dispatch rows in channel c".
     */
    public SignalWord signalWord(long offset) {
        if (offset < 0 || offset % 8 != 0 || offset / 8 >= signalWords) {
            return null;
        }
        int w = (int) (offset / 8);
        int channelWords = 6 * config.numChannels() * worldSize;
        if (w >= channelWords) {
            // Direct worlds' words: no channel (-1).
            int v = w - channelWords;
            int square = worldSize * worldSize;
            if (v < 2 * square) {
                return new SignalWord("layout exchange counts (" + ((v / square) == 0 ? "even" : "odd")
                        + " exchanges)", -1, (v % square) / worldSize);
            }
            v -= 2 * square;
            String[] direct = {"dispatch rows (done)", "combine entry", "combine rows (done)", "dispatch entry"};
            return new SignalWord(direct[v / worldSize], -1, v % worldSize);
        }
        int peer = w % worldSize;
        int rest = w / worldSize;
        int channel = rest % config.numChannels();
        String[] counters = {"dispatch count (even calls)", "dispatch count (odd calls)", "dispatch rows (tail)",
                "dispatch credits", "combine rows (tail)", "combine credits"};
        return new SignalWord(counters[rest / config.numChannels()], channel, peer);
    }

    public int signalWords() {
        return signalWords;
    }

    public long params() {
        return params;
    }

    public long tokenSlot() {
        return tokenSlot;
    }

    public long channelCount() {
        return channelCount;
    }

    public long tokensPerRank() {
        return tokensPerRank;
    }

    public long tokensPerExpert() {
        return tokensPerExpert;
    }

    public long layoutStatus() {
        return layoutStatus;
    }

    public long callSeq() {
        return callSeq;
    }

    public long combineSeq() {
        return combineSeq;
    }

    public long state() {
        return state;
    }

    public long waitNanos() {
        return waitNanos;
    }

    public long recvChannelOffset() {
        return recvChannelOffset;
    }

    public long recvChannelCount() {
        return recvChannelCount;
    }

    public long recvTotal() {
        return recvTotal;
    }

    public long localExpertCounts() {
        return localExpertCounts;
    }

    public long recvX() {
        return recvX;
    }

    public long recvScales() {
        return recvScales;
    }

    public long recvTopkIdx() {
        return recvTopkIdx;
    }

    public long recvTopkWeights() {
        return recvTopkWeights;
    }

    public long recvSrc() {
        return recvSrc;
    }

    public long combined() {
        return combined;
    }

    /** Where the received tensors end (device memory offsets, as recvX .. recvSrc). */
    public long recvEnd() {
        return recvEnd;
    }
}
