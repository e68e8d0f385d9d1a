package io.gda4j.moe.ll;

import io.gda4j.moe.core.ExactSizes;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.moe.tensor.Fp8BlockQuantizer;

/**
 * The sizes and offsets a {@link LowLatencyPart} needs in a world of {@code worldSize} ranks, computed once with
 * exact arithmetic: a size that overflows is refused with a message naming it. Row and slot counts must fit the
 * kernels' 32-bit ints; byte offsets are 64-bit everywhere.
 *
 * <p>Receive layout, expert-major: local expert {@code e} owns {@code S = worldSize x maxTokensPerRank} slots, and
 * within them source rank {@code s} owns {@code [s maxTokensPerRank, (s + 1) maxTokensPerRank)}, filled from its
 * start in the source's token order (io.gda4j.moe.check.MoeLowLatencyReference). The place of a row is a function of the
 * routing alone, never of timing: the layout is deterministic. Slots past a source's count hold stale data.
 *
 * <p><b>Send order</b>: a source numbers the rows it sends by expert, then slot: the row of (token t, expert e) is
 * {@code sendBase[e] + slot}, where {@code sendBase} sums the rows to the experts below e. The rows one source sends
 * one expert are thus consecutive both in the send order and in the expert's slots, so over proxy one put moves them
 * all, and the combine returns them to the source in one put.
 *
 * <p>The heap region (one allocation, the same offsets on every rank; L local experts, S slots each, T =
 * maxTokensPerRank, K = topK, P = payload bytes of a row, G = hidden / 128 scales of an FP8 row, 0 for BF16, M =
 * message bytes of a staged row, {@link #msgBytes()}), two buffers that alternate between calls, then the signal
 * words:
 * <pre>
 *   buffer b (b = 0, 1) at b x bufferBytes:
 *     recvX         [L][S][P]            the dispatch's x output: p2p peers store here, staged rows are unpacked here
 *     recvScales    [L][S][G] f32        FP8 only
 *     recvSrc       [L][S][4] i32        (source rank, source token, top-k slot, send row) of each row
 *     combineRecv   [T x K][hidden] bf16 written by the peers' combine: row r of this rank's send order
 *     tokenStage    [N source][T][R]     where rows are gathered ({@link #gathersRows()}): a p2p source stores each
 *                                        of its tokens here once for all the token's experts on this rank (R = P +
 *                                        4G rounded up to 16), and the receive half copies it into recvX/recvScales
 *                                        for each of them; 0 bytes otherwise
 *   only under the tagged protocol ({@link #tagged()}; 0 bytes otherwise), tagged u64 words (ll_tagged.cuh):
 *     tagCounts     [N source][C] u64    each source's count vector for this rank (C = {@link #tagCountWords()})
 *     tagRows       [N source][T][W] u64 each source's rows for this rank, one per token with an expert here (W =
 *                                        {@link #tagRowWords()}: header, payload, scales, two words per 8 bytes)
 *     combineInput  [L][S][hidden] bf16  the expert outputs where the user writes them here (combineInput()): then
 *                                        every source reads its rows from here (the pulling combine) where every
 *                                        pair is direct, and staged rows are put from here
 *   only where some pair of ranks is proxy or ibgda (0 bytes otherwise):
 *     recvMsg       [N source][H + L x T][M]   staged rows land here as messages (ll_params.cuh: record | payload |
 *                                        scales): a source's part is H slots for its count table (a batched pair's:
 *                                        entry le the rows to experts 0..le, a running sum; H = {@link #tableMsgs()}),
 *                                        then its messages, at le x T + slot (ibgda: one put each) or packed in its
 *                                        send order (batched pairs: one put of table and messages together)
 *     sendMsg       [N x H + T x K][M]   this rank's staged messages, in send order, the rows to each rank r behind
 *                                        a gap of H slots (send row i to rank r at slot i + (r + 1) x H), where the
 *                                        table sent to r is written: put from here
 *     tables        [N][L] u64           batched pairs' count tables as their experts' last writers fill them (entry
 *                                        le: the first send row and the rows of expert le), one per rank r
 *     combineStage  [N][T x min(K, L)][hidden] bf16   a batched combine's rows for source s, in its send order
 *   signals (u64) at 2 x bufferBytes:
 *     dispatchCount [2 buffer][L][N source]   SET by the source after its rows: call sequence &lt;&lt; 32 | rows,
 *                                             | {@link #GATHERED_ROWS} where they wait in this rank's tokenStage
 *     combineFlag   [2 buffer][numExperts]    SET by the expert's rank after its rows: call sequence &lt;&lt; 1 | 1
 *                                             where it left them in its combine input to be read
 *     dispatchBatch [2 buffer][N source]      batched pairs: SET by the source after its rows and its table
 *                                             (call sequence &lt;&lt; 32 | rows), in place of its counts
 *     combineBatch  [2 buffer][N rank]        batched pairs: SET by the expert's rank after its rows, in place of
 *                                             its experts' flags
 *     combineRankFlag [2 buffer][N rank]      the tagged protocol: SET by each rank's combine (call sequence &lt;&lt; 1 |
 *                                             1 where it left its rows to be read), in place of its experts' flags
 * </pre>
 * A pair is batched where each put costs a host call (the proxy): there one put carries a source's count table and
 * all its rows to a rank, and one the combine's rows back ({@code gda4j::prefers_few_puts}), where one put per
 * (expert, source) cost a driver call each, and a put of the rows and another of the table one more each call.
 * Device memory of each rank (outside the heap; offsets from its start):
 * <pre>
 *   status        [2] u64   per buffer: 0, or the first bad top-k entry (token x K + slot + 1) of the last dispatch
 *   seq           [2] u64   per buffer: call sequence, raised by each dispatch on the GPU (CUDA graphs replay it)
 *   waitNanos     [N] u64   time spent waiting for each peer
 *   buffer b at bufferState + b x stateBytes:
 *     routeSlot     [T][K] i32   slot of (token, k) in its expert's range at the receiver; -1: none or a repeat
 *     sendCount     [numExperts] i32   rows this rank sends to each expert
 *     sendBase      [numExperts] i32   first send row of each expert (the rows to experts below it)
 *     sendDone      [2][numExperts + N] i32, then 1 i32   rows whose data is out per expert (the last writer
 *                   signals the count), then experts whose count is out per rank (batched pairs: the last one puts
 *                   the rank's rows and table); one copy per parity of the call's sequence number; then the fused
 *                   route's arrival counter
 *     recvCountSrc  [L][N] i32   rows received per (local expert, source)
 *     recvCount     [L] i32      rows received per local expert
 *     recvOffsetSrc [L][N] i32   batched sources: where (local expert, source)'s rows start in the source's packed
 *                                messages (the rows from that source to the experts below)
 *     combineDone   [N] i32      batched pairs: local experts whose rows for the source are staged (the last one
 *                                puts them); zeroed by each dispatch
 *     combined      [T][hidden] bf16   the combine's output
 *     combineReady  u64          seq once the combine's receive half saw every expert's flag (| 1 &lt;&lt; 63: its wait
 *                                failed): what its other blocks wait for
 * </pre>
 */
public final class LowLatencySizing {
    /**
     * {@code tagged} (the default) or {@code counted}: the protocol a buffer asks for ({@link Protocol#requested()},
     * {@link #tagged()}; a world with a proxy or ibgda pair runs the counted one whatever is asked). Set it alike in
     * every process of a world: it sizes the heap region.
     */
    public static final String PROTOCOL_PROP_NAME = "gda4j.moe.lowLatencyProtocol";

    /**
     * The two protocols of the low-latency calls. COUNTED: rows, then a count per (expert, source) released after
     * them (batched per pair over the proxy); every world can run it. TAGGED ({@code gda4j/moe/ll_tagged.cuh}): every
     * 4 bytes travel beside the call's tag, for worlds whose pairs are all direct (p2p, self), where it is the
     * default: no sender fences or signals after its data, so its calls are shorter chains ({@link #tagged()}).
     */
    public enum Protocol {
        COUNTED, TAGGED;

        /** The protocol {@value #PROTOCOL_PROP_NAME} asks for: TAGGED unless it says {@code counted}. */
        public static Protocol requested() {
            String v = System.getProperty(PROTOCOL_PROP_NAME, "tagged").trim();
            if (v.equalsIgnoreCase("tagged")) {
                return TAGGED;
            }
            if (v.equalsIgnoreCase("counted")) {
                return COUNTED;
            }
            throw new IllegalArgumentException("-D" + PROTOCOL_PROP_NAME + " must be counted or tagged, got '" + v
                    + "'");
        }
    }

    /**
     * The most dynamic shared memory a tagged kernel takes (a word per (source, local expert), plus one per source):
     * past it the counted protocol runs, as it needs none.
     */
    static final int TAGGED_MAX_SHARED_BYTES = 48 * 1024;
    /** Ints of a row's source record: source rank, source token, top-k slot, send row. */
    public static final int SRC_INTS = 4;
    /** Bytes of a staged message before the payload: the source record. */
    public static final int MSG_HEADER_BYTES = 4 * SRC_INTS;
    /**
     * {@code auto} (the default), {@code true} or {@code false}: whether a p2p source gathers a token's rows to one
     * rank into one store of the row ({@link #gathersRows()}); for A/B runs and tests of both paths.
     */
    public static final String GATHER_ROWS_PROP_NAME = "gda4j.moe.gatherRows";
    /**
     * Calls of fewer tokens store each row once per expert even where the buffer gathers rows
     * ({@link #gathersRows()}). 2 ranks on 2 H100s, DeepEP's shape, FP8, gathering every call: 1 token 0.022 -> 0.024
     * ms, 32 tokens 0.024 both, 128 tokens 0.036 -> 0.032, 512 tokens 0.074 -> 0.056.
     */
    public static final int GATHER_MIN_TOKENS = 64;
    /** The bit of a dispatch count's low word that says its rows were gathered into the receiver's token stage. */
    public static final long GATHERED_ROWS = 1L << 31;

    private final LowLatencyPart config;
    private final int worldSize;
    private final int numLocalExperts;
    private final int slotsPerExpert;
    private final int payloadBytes;
    private final int scalesPerRow;
    private final boolean staged;
    private final int msgBytes;
    private final int stageRowBytes;
    private final boolean tagged;
    private final int tagCountWords;
    private final int tagHeaderWords;
    private final int tagScaleWord;
    private final int tagRowWords;
    private final int tagSegments;

    private final long recvX;
    private final long recvScales;
    private final long recvSrc;
    private final long combineRecv;
    private final long recvMsg;
    private final long sendMsg;
    private final long tables;
    private final long tableMsgs;
    private final long combineStage;
    private final long tokenStage;
    private final long tagCounts;
    private final long tagRows;
    private final long combineInput;
    private final long bufferBytes;
    private final long signals;
    private final int signalWords;
    private final long heapBytes;

    private final long status;
    private final long seq;
    private final long waitNanos;
    private final long bufferState;
    private final long routeSlot;
    private final long sendCount;
    private final long sendBase;
    private final long sendDone;
    private final long recvCountSrc;
    private final long recvCount;
    private final long recvOffsetSrc;
    private final long combineDone;
    private final long combined;
    private final long combineReady;
    private final long stateBytes;
    private final long deviceBytes;

    LowLatencySizing(LowLatencyPart c, int worldSize, boolean staged, Protocol protocol) {
        ExactSizes x = new ExactSizes(LowLatencyPart.OWNER);
        c.shape().checkWorld(LowLatencyPart.OWNER, worldSize);
        this.config = c;
        this.worldSize = worldSize;
        this.numLocalExperts = c.numExperts() / worldSize;
        int t = c.maxTokensPerRank();
        int k = c.topK();
        this.slotsPerExpert = x.toInt("slots per expert (worldSize x maxTokensPerRank)",
                x.mul("slots per expert", worldSize, t));
        x.toInt("received rows (numExperts x maxTokensPerRank)", x.mul("received rows", c.numExperts(), t));
        this.payloadBytes = x.toInt("payload bytes per row", x.mul("payload bytes per row", c.hidden(),
                c.dispatchType().bytes()));
        this.scalesPerRow = c.dispatchType() == ElementType.FP8_E4M3 ? c.hidden() / Fp8BlockQuantizer.BLOCK : 0;
        this.staged = staged;
        this.msgBytes = staged ? x.toInt("message bytes per staged row", (MSG_HEADER_BYTES + (long) payloadBytes
                + 4L * scalesPerRow + 15) & -16L) : 0;
        long rows = x.mul("received rows", numLocalExperts, slotsPerExpert);
        x.toInt("received rows per rank (local experts x slots)", rows);
        x.toInt("top-k entries (maxTokensPerRank x topK)", x.mul("top-k entries", t, k));

        long at = 0;
        recvX = at;
        at = x.next(at, "recvX bytes", x.mul("recvX bytes", rows, payloadBytes));
        recvScales = at;
        at = x.next(at, "recvScales bytes", x.mul("recvScales bytes", rows, 4L * scalesPerRow));
        recvSrc = at;
        at = x.next(at, "recvSrc bytes", x.mul("recvSrc bytes", rows, 4L * SRC_INTS));
        combineRecv = at;
        at = x.next(at, "combineRecv bytes",
                x.mul("combineRecv bytes", x.mul("combineRecv rows", t, k), 2L * c.hidden()));
        this.tableMsgs = tableMsgs(numLocalExperts, msgBytes);
        long tableSlots = x.mul("count table slots", worldSize, tableMsgs);
        recvMsg = at;
        at = x.next(at, "recvMsg bytes", x.mul("recvMsg bytes", x.add("recvMsg slots", rows, tableSlots), msgBytes));
        sendMsg = at;
        at = x.next(at, "sendMsg bytes", x.mul("sendMsg bytes", x.add("sendMsg slots", x.mul("sendMsg rows", t, k),
                tableSlots), msgBytes));
        tables = at;
        at = x.next(at, "count tables", staged ? x.mul("count tables", 8L * worldSize, numLocalExperts) : 0);
        combineStage = at;
        at = x.next(at, "combineStage bytes", staged ? x.mul("combineStage bytes", x.mul("combineStage rows",
                worldSize, x.mul("combineStage rows", t, Math.min(k, numLocalExperts))), 2L * c.hidden()) : 0);
        boolean gather = gathers(c, worldSize);
        this.tagged = protocol == Protocol.TAGGED && !staged
                && 4L * worldSize * (numLocalExperts + 1) <= TAGGED_MAX_SHARED_BYTES;
        this.stageRowBytes = gather && !tagged ? x.toInt("token stage bytes per row", (payloadBytes
                + 4L * scalesPerRow + 15) & -16L) : 0;
        tokenStage = at;
        at = x.next(at, "tokenStage bytes", x.mul("tokenStage bytes", x.mul("tokenStage rows", worldSize, t),
                stageRowBytes));
        // A tagged row: the header (the token, a place per top-k entry; even), then per 512-channel chunk 32 pairs
        // of words for FP8 (16 bytes a lane) or 64 for BF16, then a word per FP8 scale; even, so rows stay 16-aligned.
        this.tagCountWords = x.toInt("tagged count words", (numLocalExperts + 2L + 1) & -2L);
        this.tagHeaderWords = (1 + k + 1) & -2;
        long chunks = (c.hidden() + MoeLowLatencyParamsDescriptor.SEND_CHUNK - 1L)
                / MoeLowLatencyParamsDescriptor.SEND_CHUNK;
        this.tagScaleWord = x.toInt("tagged row words", tagHeaderWords + chunks * 64 * 2 * c.dispatchType().bytes());
        this.tagRowWords = x.toInt("tagged row words", (tagScaleWord + (long) scalesPerRow + 1) & -2L);
        long segmentChunks = MoeLowLatencyParamsDescriptor.TAG_SEGMENT_PAIRS / (2L * c.dispatchType().bytes());
        this.tagSegments = (int) ((chunks + segmentChunks - 1) / segmentChunks);
        tagCounts = at;
        at = x.next(at, "tagCounts bytes", tagged ? x.mul("tagCounts bytes", worldSize, 8L * tagCountWords) : 0);
        tagRows = at;
        at = x.next(at, "tagRows bytes", tagged ? x.mul("tagRows bytes", x.mul("tagRows rows", worldSize, t),
                8L * tagRowWords) : 0);
        combineInput = at;
        bufferBytes = x.next(at, "combineInput bytes", x.mul("combineInput bytes", rows, 2L * c.hidden()));
        signals = x.mul("two buffers", 2, bufferBytes);
        signalWords = x.toInt("signal words", x.add("signal words",
                x.mul("dispatch counts", 2L * numLocalExperts, worldSize),
                2L * c.numExperts() + 6L * worldSize));
        heapBytes = x.next(signals, "signal bytes", 8L * signalWords);

        long d = 0;
        status = d;
        d = x.next(d, "status", 16);
        seq = d;
        d = x.next(d, "seq", 16);
        waitNanos = d;
        d = x.next(d, "wait time per peer", 8L * worldSize);
        bufferState = d;
        long s = 0;
        routeSlot = s;
        s = x.next(s, "routeSlot", x.mul("routeSlot", t, 4L * k));
        sendCount = s;
        s = x.next(s, "sendCount", 4L * c.numExperts());
        sendBase = s;
        s = x.next(s, "sendBase", 4L * c.numExperts());
        sendDone = s;
        s = x.next(s, "sendDone", 4L * (2L * (c.numExperts() + worldSize) + 1));
        recvCountSrc = s;
        s = x.next(s, "recvCountSrc", 4L * numLocalExperts * worldSize);
        recvCount = s;
        s = x.next(s, "recvCount", 4L * numLocalExperts);
        recvOffsetSrc = s;
        s = x.next(s, "recvOffsetSrc", 4L * numLocalExperts * worldSize);
        combineDone = s;
        s = x.next(s, "combineDone", 4L * worldSize);
        combined = s;
        s = x.next(s, "combined rows (maxTokensPerRank x 2 hidden)", x.mul("combined", t, 2L * c.hidden()));
        combineReady = s;
        stateBytes = x.next(s, "combineReady", 8);
        deviceBytes = x.add("device bytes", bufferState, x.mul("device state of two buffers", 2, stateBytes));
    }

    public LowLatencyPart config() {
        return config;
    }

    public int worldSize() {
        return worldSize;
    }

    public int numLocalExperts() {
        return numLocalExperts;
    }

    /** Slots of each local expert: worldSize x maxTokensPerRank. */
    public int slotsPerExpert() {
        return slotsPerExpert;
    }

    public int payloadBytes() {
        return payloadBytes;
    }

    public int scalesPerRow() {
        return scalesPerRow;
    }

    /** Whether the staging sections exist: some pair of ranks is proxy or ibgda. */
    public boolean staged() {
        return staged;
    }

    /**
     * Bytes of one staged row's message (source record, payload, scales, rounded up to 16; ll_params.cuh), 0 when
     * nothing is staged.
     */
    public int msgBytes() {
        return msgBytes;
    }

    /**
     * Message slots a batched pair's count table ({@code numLocalExperts} u64) takes where it travels with the rows
     * in one put: at the head of each source's part of recvMsg, and in the gap before each rank's rows in sendMsg.
     * 0 when nothing is staged.
     */
    public long tableMsgs() {
        return tableMsgs;
    }

    /** {@link #tableMsgs()}'s formula, as ll_params.cuh's {@code ll_table_msgs} has it. */
    static long tableMsgs(int numLocalExperts, int msgBytes) {
        return msgBytes == 0 ? 0 : (8L * numLocalExperts + msgBytes - 1) / msgBytes;
    }

    /**
     * Whether {@code c} in a world of {@code worldSize} ranks gathers rows ({@value #GATHER_ROWS_PROP_NAME}; auto:
     * where a token has on average two or more of its experts on each rank, {@code topK >= 2 x worldSize}, so one
     * store of its row to a rank stands for several). A p2p source then stores each token's row once to each other
     * rank that has its experts, into that rank's token stage, instead of once per expert into the expert's rows, and
     * the receive half copies it out for each expert; the bytes that cross NVLink drop by the experts per rank (2
     * ranks, top-8: about 4x), for one local copy per row at the receiver. Rows to this rank's own experts and to
     * proxy and ibgda peers are unchanged, and so are calls of fewer than {@value #GATHER_MIN_TOKENS} tokens, where
     * the copy's latency outweighed the bytes. Set the property alike in every process of a world: it sizes the heap
     * region.
     */
    static boolean gathers(LowLatencyPart c, int worldSize) {
        String v = System.getProperty(GATHER_ROWS_PROP_NAME, "auto").trim();
        if (v.equalsIgnoreCase("true")) {
            return worldSize > 1;
        }
        if (v.equalsIgnoreCase("false")) {
            return false;
        }
        if (!v.equalsIgnoreCase("auto")) {
            throw new IllegalArgumentException("-D" + GATHER_ROWS_PROP_NAME + " must be auto, true or false, got '" + v
                    + "'");
        }
        return worldSize > 1 && c.topK() >= 2 * worldSize;
    }

    /**
     * Whether p2p sources of the counted protocol gather each token's rows to a rank into one row of its token stage
     * (the tagged protocol always sends a token's row once per rank, into its tagged rows).
     */
    public boolean gathersRows() {
        return stageRowBytes != 0;
    }

    /**
     * Whether the calls run the tagged protocol ({@code gda4j/moe/ll_tagged.cuh}): it was asked for
     * ({@link Protocol}, the default), every pair of ranks is p2p or self, and a word per (source, local expert) fits
     * a block's shared memory. Each 4 bytes of a row, a count or a header travel in a u64 beside the call's tag, so
     * the receiver takes each word as it lands and no sender fences or signals after its data: no route kernel, one
     * kernel per call while one wave holds its send units, one flag per rank in the combine. Its price is the bytes
     * of the dispatch: twice the payload crosses, once per (token, other rank) rather than once per (token, expert);
     * a rank's rows to its own experts go in place. Otherwise the counted protocol runs: rows, then a count per
     * (expert, source) released after them (batched per pair over the proxy).
     */
    public boolean tagged() {
        return tagged;
    }

    /** Tagged words of a count vector: the rows to this rank, the rows below it, one per local expert; even. */
    public int tagCountWords() {
        return tagCountWords;
    }

    /** Tagged words of a row's header: the token, then a place per top-k entry; even. */
    public int tagHeaderWords() {
        return tagHeaderWords;
    }

    /** The word of a tagged row where its FP8 scales begin (after the header and the payload's chunks). */
    public int tagScaleWord() {
        return tagScaleWord;
    }

    /** Tagged words of a row (u64 each: 4 bytes of data and the call's tag); even. */
    public int tagRowWords() {
        return tagRowWords;
    }

    /**
     * Segments of a tagged row, a warp's share each in the receive half: {@link
     * MoeLowLatencyParamsDescriptor#TAG_SEGMENT_PAIRS} pairs a lane, which are 4 of the 512-channel chunks for FP8 (2
     * pairs a lane each) and 2 for BF16 (4 each); a warp loads its segment's pairs, the row's header and the
     * segment's scales at once. DeepEP's hidden 7168: 4 segments (FP8), 7 (BF16).
     */
    public int tagSegments() {
        return tagSegments;
    }

    /**
     * Warps of the tagged receive per row index i (every source's i-th row here): a segment each of the rows of the
     * other {@code worldSize - 1} sources, and one for this rank's own row, whose payload its send half stored in place
     * (the warp writes the source records from its header).
     */
    public int tagWarpsPerRowIndex() {
        return (worldSize - 1) * tagSegments + 1;
    }

    /** Bytes of one row of the token stage (payload and scales, rounded up to 16); 0 where rows are not gathered. */
    public int stageRowBytes() {
        return stageRowBytes;
    }

    /** Symmetric-heap bytes per rank: two buffers and the signal words. */
    public long heapBytes() {
        return heapBytes;
    }

    public long bufferBytes() {
        return bufferBytes;
    }

    /** Device bytes per rank outside the heap. */
    public long deviceBytes() {
        return deviceBytes;
    }

    /** Heap offset (from the region's start) of a section of buffer {@code b}. */
    public long recvX(int b) {
        return b * bufferBytes + recvX;
    }

    public long recvScales(int b) {
        return b * bufferBytes + recvScales;
    }

    public long recvSrc(int b) {
        return b * bufferBytes + recvSrc;
    }

    public long combineRecv(int b) {
        return b * bufferBytes + combineRecv;
    }

    public long recvMsg(int b) {
        return b * bufferBytes + recvMsg;
    }

    public long sendMsg(int b) {
        return b * bufferBytes + sendMsg;
    }

    public long tables(int b) {
        return b * bufferBytes + tables;
    }

    public long combineStage(int b) {
        return b * bufferBytes + combineStage;
    }

    public long tokenStage(int b) {
        return b * bufferBytes + tokenStage;
    }

    public long combineInput(int b) {
        return b * bufferBytes + combineInput;
    }

    public long tagCounts(int b) {
        return b * bufferBytes + tagCounts;
    }

    public long tagRows(int b) {
        return b * bufferBytes + tagRows;
    }

    /** Bytes between recvX and recvScales, etc.: what each section may hold. */
    long recvXBytes() {
        return recvScales - recvX;
    }

    long recvScalesBytes() {
        return recvSrc - recvScales;
    }

    long recvSrcBytes() {
        return combineRecv - recvSrc;
    }

    public long signals() {
        return signals;
    }

    public int signalWords() {
        return signalWords;
    }

    /** Index of the dispatch count word of (buffer, local expert, source) in the signal section (ll.cuh: the same). */
    public int dispatchCountWord(int buffer, int localExpert, int source) {
        return (buffer * numLocalExperts + localExpert) * worldSize + source;
    }

    /** Index of the combine flag word of (buffer, global expert). */
    public int combineFlagWord(int buffer, int expert) {
        return 2 * numLocalExperts * worldSize + buffer * config.numExperts() + expert;
    }

    /** Index of the word a batched source SETs once its rows and count table to this rank are out. */
    public int dispatchBatchWord(int buffer, int source) {
        return 2 * numLocalExperts * worldSize + 2 * config.numExperts() + buffer * worldSize + source;
    }

    /** Index of the word a batched expert rank SETs once its combine rows to this rank are out. */
    public int combineBatchWord(int buffer, int expertRank) {
        return 2 * numLocalExperts * worldSize + 2 * config.numExperts() + 2 * worldSize + buffer * worldSize
                + expertRank;
    }

    /** Index of the word expert rank {@code expertRank}'s tagged combine SETs at every rank (one per rank). */
    public int combineRankFlagWord(int buffer, int expertRank) {
        return 2 * numLocalExperts * worldSize + 2 * config.numExperts() + 4 * worldSize + buffer * worldSize
                + expertRank;
    }

    /**
     * A signal word by name: what it counts, the buffer, the peer whose write it waits for, the expert (-1 for a word
     * that stands for all of the peer's experts), and whether it is a tagged word (its value is the tag of the call
     * that wrote it, and a wait wants this call's exactly).
     */
    public record SignalWord(String counter, int buffer, int peer, int expert, boolean tag) {
        public SignalWord(String counter, int buffer, int peer, int expert) {
            this(counter, buffer, peer, expert, false);
        }
    }

    /**
     * Which word lies at {@code offset} bytes into the heap region: a signal word, or a word of a tagged section
     * (a source's count vector or one of its rows), or null when none of those does.
     */
    public SignalWord wordAt(long offset) {
        if (offset >= signals) {
            return signalWord(offset - signals);
        }
        if (!tagged || offset < 0 || offset % 8 != 0) {
            return null;
        }
        int b = (int) (offset / bufferBytes);
        long in = offset % bufferBytes;
        long vectors = 8L * worldSize * tagCountWords;
        if (in >= tagCounts && in < tagCounts + vectors) {
            return new SignalWord("low-latency dispatch counts", b, (int) ((in - tagCounts) / (8L * tagCountWords)), -1,
                    true);
        }
        long rowBytes = 8L * tagRowWords;
        long rows = rowBytes * worldSize * config.maxTokensPerRank();
        if (in >= tagRows && in < tagRows + rows) {
            long row = (in - tagRows) / rowBytes;
            return new SignalWord("low-latency dispatch row " + row % config.maxTokensPerRank(), b,
                    (int) (row / config.maxTokensPerRank()), -1, true);
        }
        return null;
    }

    /** Which word lies at {@code offset} bytes into the signal section, or null when none does. */
    public SignalWord signalWord(long offset) {
        if (offset < 0 || offset % 8 != 0 || offset / 8 >= signalWords) {
            return null;
        }
        int w = (int) (offset / 8);
        int counts = 2 * numLocalExperts * worldSize;
        if (w < counts) {
            int source = w % worldSize;
            int rest = w / worldSize;
            return new SignalWord("low-latency dispatch count", rest / numLocalExperts, source,
                    rest % numLocalExperts);
        }
        w -= counts;
        if (w < 2 * config.numExperts()) {
            int expert = w % config.numExperts();
            return new SignalWord("low-latency combine flag", w / config.numExperts(), expert / numLocalExperts,
                    expert);
        }
        w -= 2 * config.numExperts();
        String counter = w < 2 * worldSize ? "low-latency dispatch batch"
                : w < 4 * worldSize ? "low-latency combine batch" : "low-latency combine flag";
        w %= 2 * worldSize;
        return new SignalWord(counter, w / worldSize, w % worldSize, -1);
    }

    public long status() {
        return status;
    }

    public long seq() {
        return seq;
    }

    public long waitNanos() {
        return waitNanos;
    }

    /** Device offset of buffer {@code b}'s state block. */
    public long bufferState(int b) {
        return bufferState + b * stateBytes;
    }

    public long stateBytes() {
        return stateBytes;
    }

    /** Offsets within a buffer's state block. */
    public long routeSlot() {
        return routeSlot;
    }

    public long sendCount() {
        return sendCount;
    }

    public long sendBase() {
        return sendBase;
    }

    public long sendDone() {
        return sendDone;
    }

    public long recvCountSrc() {
        return recvCountSrc;
    }

    public long recvCount() {
        return recvCount;
    }

    public long recvOffsetSrc() {
        return recvOffsetSrc;
    }

    public long combineDone() {
        return combineDone;
    }

    public long combined() {
        return combined;
    }

    public long combineReady() {
        return combineReady;
    }
}
