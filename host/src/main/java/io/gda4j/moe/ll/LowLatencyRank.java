package io.gda4j.moe.ll;

import io.gda4j.cuda.CudaEvent;
import io.gda4j.cuda.CudaStream;
import io.gda4j.cuda.DevicePointer;
import io.gda4j.cuda.Kernel;
import io.gda4j.cuda.KernelArgs;
import io.gda4j.moe.core.MoeParamsHeaderDescriptor;
import io.gda4j.moe.core.MoeRankMemory;
import io.gda4j.moe.tensor.DeviceTensor;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.transport.Capability;
import io.gda4j.world.Rank;
import io.gda4j.world.World;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One rank's low-latency calls, as io.gda4j.moe.MoeRank offers them (lowLatencyDispatch, lowLatencyCombine), queued on
 * the rank's stream with no host synchronisation: {@link #dispatch} and {@link #combine}, each optionally split into a
 * send half (returns once the sends are queued) and a receive half ({@code receive()} on what it returned), so the
 * caller can overlap its own work with the transfer. Dispatch number i takes buffer i % 2 and holds it until combined
 * or released: a third dispatch while the first is held throws before any kernel is queued
 * ({@link AlternatingBuffers}).
 *
 * <p>Checked on the host before anything is queued: element types, shapes, the token count (at most
 * maxTokensPerRank), the buffer state. Expert indices live on the GPU and are checked there (the host cannot read
 * them without a synchronisation): the route (the dispatch's own blocks, a block per token, where one wave holds them;
 * else a route kernel before the dispatch) records the first entry outside [-1, numExperts) and treats every such
 * entry as -1, so all ranks still complete the call; MoeLowLatencyDispatch.checkRouting() and MoeBuffer.checkErrors()
 * (host synchronisations) throw naming it. Callers whose indices are on the host can check them first with
 * io.gda4j.moe.check.MoeLowLatencyReference#route.
 */
public final class LowLatencyRank implements AutoCloseable {
    private static final int READBACK_BYTES = 64 * 1024;
    private static final int ROUTE_THREADS = 1024;
    private static final int TOKEN_WARPS = MoeLowLatencyParamsDescriptor.TOKEN_WARPS;
    /** The most dynamic shared memory a kernel takes without opting in: past it, the route kernel routes. */
    private static final int MAX_ROUTE_SHARED = 48 * 1024;
    /**
     * {@code -Dgda4j.moe.routeKernel=true} routes every dispatch with the route kernel, as before the dispatch blocks
     * routed their own tokens: for measuring one against the other in one run. The results are the same bit for bit.
     */
    private static final boolean ROUTE_KERNEL_ALWAYS = Boolean.getBoolean("gda4j.moe.routeKernel");
    /**
     * {@code auto} (the default), {@code true} or {@code false}: whether a tagged dispatch without the split runs as
     * one kernel ({@link #taggedDispatch}; auto: while one wave holds its send units), for measuring one form against
     * the other and for tests of both. Read when the buffer is made; the results are the same bit for bit.
     */
    public static final String ONE_KERNEL_DISPATCH_PROP_NAME = "gda4j.moe.oneKernelDispatch";
    private static final int RECV_THREADS = 256;
    private static final int COMBINE_SEND_THREADS = 256;

    private final LowLatencyBuffer buffer;
    private final Rank rank;
    private final LowLatencySizing s;
    private final MoeRankMemory memory;
    /** Recorded after each call (memory.done()). */
    private final CudaEvent done;
    private final Kernel route;
    private final Kernel dispatchSend;
    private final Kernel dispatchRecv;
    private final Kernel combineSend;
    private final Kernel combineRecv;
    /** The calls without the split: both halves in one kernel each. */
    private final Kernel dispatchWhole;
    private final Kernel combineWhole;
    private final AlternatingBuffers buffers = new AlternatingBuffers();
    /** Per buffer, the dispatch number whose combine last used it: its output is that combine's. */
    private final long[] combinedCall = {-1, -1};
    /** Set by close: every later call is refused (the memory it would use is freed). */
    private volatile boolean closed;
    /** The most blocks a kernel of this rank that waits for peers may launch ({@link #spinningBlocks}). */
    private final int spinningBlocks;
    /** Every kernel's params block, passed by value ({@link KernelArgs#struct}). */
    private final ByteBuffer params;
    /** Blocks per token of the dispatch send where one wave holds them all ({@link #rowParts}). */
    private final int rowParts;
    /** Blocks of the dispatch send that fit at once on this rank's share of its GPU. */
    private final int sendWave;
    /** The most blocks of the whole dispatch (no split, {@link #waitingWave}): it waits for counts it sends itself. */
    private final int dispatchWave;
    /** The same for the whole combine: it waits for every rank's flags, its own grid's included. */
    private final int combineWave;
    /** Dynamic shared memory of a dispatch block that routes its own token: a word per expert. */
    private final int routeShared;
    /** The tagged protocol's kernels ({@link LowLatencySizing#tagged()}), null under the counted one. */
    private final TaggedKernels tagged;
    /** Per buffer, the tokens of the dispatch that last took it: what its tagged receive half sizes its grid by. */
    private final int[] dispatchedTokens = new int[2];
    /** {@value #ONE_KERNEL_DISPATCH_PROP_NAME}: null for auto, else whether a tagged dispatch is always one kernel. */
    private final Boolean oneKernelDispatch = oneKernelDispatchRequested();

    /**
     * The tagged protocol's kernels and grids: the dispatch's send half launches every unit (a count vector per rank,
     * then every (token, part)), the whole calls as many blocks as the GPU holds at once (their receives wait for
     * rows and flags the grid's own blocks send), within the rank's share of its GPU where ranks share one.
     */
    private record TaggedKernels(Kernel dispatchSend, Kernel dispatchRecv, Kernel dispatch, Kernel combineSend,
                                 Kernel combineRecv, Kernel combine, int sharedBytes, int sendWave, int dispatchWave,
                                 int combineWave) {
    }

    LowLatencyRank(LowLatencyBuffer buffer, Rank rank) {
        this.buffer = buffer;
        this.rank = rank;
        this.s = buffer.sizing();
        String m = LowLatencyBuffer.MODULE;
        this.route = rank.kernel(m, "gda4j_moe_ll_route");
        this.dispatchSend = rank.kernel(m, "gda4j_moe_ll_dispatch_send");
        this.dispatchRecv = rank.kernel(m, "gda4j_moe_ll_dispatch_recv");
        this.combineSend = rank.kernel(m, "gda4j_moe_ll_combine_send");
        this.combineRecv = rank.kernel(m, "gda4j_moe_ll_combine_recv");
        this.dispatchWhole = rank.kernel(m, "gda4j_moe_ll_dispatch");
        this.combineWhole = rank.kernel(m, "gda4j_moe_ll_combine");
        if (route.maxThreadsPerBlock() < ROUTE_THREADS) {
            throw new IllegalStateException("the low-latency route kernel needs 1024-thread blocks, " + rank.device()
                    + " allows " + route.maxThreadsPerBlock());
        }
        this.spinningBlocks = spinningBlocks(buffer.world(), rank);
        this.rowParts = rowParts(buffer.world(), rank, s.config().hidden());
        int ranksOnGpu = Math.max(1, buffer.world().ranksOnGpuOf(rank.rank()));
        this.routeShared = 4 * s.config().numExperts();
        int shared = routeShared <= MAX_ROUTE_SHARED ? routeShared : 0;
        this.sendWave = Math.max(1, dispatchSend.maxActiveBlocksPerMultiprocessor(32 * TOKEN_WARPS, shared)
                * rank.device().multiprocessorCount() / ranksOnGpu);
        this.dispatchWave = waitingWave(dispatchWhole, 32 * TOKEN_WARPS, shared, ranksOnGpu);
        this.combineWave = waitingWave(combineWhole, COMBINE_SEND_THREADS, 0, ranksOnGpu);
        this.tagged = s.tagged() ? taggedKernels(m, ranksOnGpu) : null;
        this.memory = new MoeRankMemory(rank, s.deviceBytes(), READBACK_BYTES);
        this.params = paramsBlock(memory.address());
        this.done = memory.done();
    }

    /**
     * The most blocks of a whole call (no split) of {@code kernel}, whose blocks wait for words that other blocks of
     * it send, so all must be resident at once: every block the GPU holds at once for a rank alone on its GPU, else
     * {@link #spinningBlocks}, so that the waiting blocks of ranks sharing a GPU never hold every SM.
     */
    private int waitingWave(Kernel kernel, int threads, int sharedBytes, int ranksOnGpu) {
        return ranksOnGpu > 1 ? spinningBlocks
                : Math.max(1, kernel.maxActiveBlocksPerMultiprocessor(threads, sharedBytes)
                        * rank.device().multiprocessorCount());
    }

    private TaggedKernels taggedKernels(String module, int ranksOnGpu) {
        Kernel send = rank.kernel(module, "gda4j_moe_ll_tagged_dispatch_send");
        Kernel dispatch = rank.kernel(module, "gda4j_moe_ll_tagged_dispatch");
        Kernel combine = rank.kernel(module, "gda4j_moe_ll_tagged_combine");
        int shared = 4 * s.worldSize() * (s.numLocalExperts() + 1);
        return new TaggedKernels(send, rank.kernel(module, "gda4j_moe_ll_tagged_dispatch_recv"), dispatch,
                rank.kernel(module, "gda4j_moe_ll_tagged_combine_send"),
                rank.kernel(module, "gda4j_moe_ll_tagged_combine_recv"), combine, shared,
                Math.max(1, send.maxActiveBlocksPerMultiprocessor(32 * TOKEN_WARPS, shared)
                        * rank.device().multiprocessorCount() / ranksOnGpu),
                waitingWave(dispatch, 32 * TOKEN_WARPS, shared, ranksOnGpu),
                waitingWave(combine, COMBINE_SEND_THREADS, 0, ranksOnGpu));
    }

    private ByteBuffer paramsBlock(long base) {
        LowLatencyPart c = s.config();
        long heap = buffer.heapRegion().offset();
        ByteBuffer b = ByteBuffer.allocateDirect(MoeLowLatencyParamsDescriptor.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        MoeParamsHeaderDescriptor.write(b, MoeLowLatencyParamsDescriptor.HEAD_OFFSET,
                MoeLowLatencyParamsDescriptor.PARAMS_MAGIC, s.worldSize(), rank.rank(), c.hidden(), c.dispatchType(),
                c.topK(), c.numExperts(), s.numLocalExperts());
        b.putInt(MoeLowLatencyParamsDescriptor.MAX_TOKENS_OFFSET, c.maxTokensPerRank());
        b.putInt(MoeLowLatencyParamsDescriptor.SLOTS_PER_EXPERT_OFFSET, s.slotsPerExpert());
        b.putInt(MoeLowLatencyParamsDescriptor.PAYLOAD_BYTES_OFFSET, s.payloadBytes());
        b.putInt(MoeLowLatencyParamsDescriptor.SCALES_PER_ROW_OFFSET, s.scalesPerRow());
        b.putInt(MoeLowLatencyParamsDescriptor.POWER_OF_TWO_SCALES_OFFSET, c.powerOfTwoScales() ? 1 : 0);
        b.putInt(MoeLowLatencyParamsDescriptor.MSG_BYTES_OFFSET, s.msgBytes());
        b.putLong(MoeLowLatencyParamsDescriptor.REGION_OFFSET, heap);
        b.putLong(MoeLowLatencyParamsDescriptor.BUFFER_BYTES_OFFSET, s.bufferBytes());
        b.putLong(MoeLowLatencyParamsDescriptor.RECV_X_OFFSET, s.recvX(0));
        b.putLong(MoeLowLatencyParamsDescriptor.RECV_SCALES_OFFSET, s.recvScales(0));
        b.putLong(MoeLowLatencyParamsDescriptor.RECV_SRC_OFFSET, s.recvSrc(0));
        b.putLong(MoeLowLatencyParamsDescriptor.COMBINE_RECV_OFFSET, s.combineRecv(0));
        b.putLong(MoeLowLatencyParamsDescriptor.RECV_MSG_OFFSET, s.recvMsg(0));
        b.putLong(MoeLowLatencyParamsDescriptor.SEND_MSG_OFFSET, s.sendMsg(0));
        b.putLong(MoeLowLatencyParamsDescriptor.COMBINE_INPUT_OFFSET, s.combineInput(0));
        b.putLong(MoeLowLatencyParamsDescriptor.SIGNALS_OFFSET, heap + s.signals());
        b.putLong(MoeLowLatencyParamsDescriptor.STATUS_OFFSET, base + s.status());
        b.putLong(MoeLowLatencyParamsDescriptor.SEQ_OFFSET, base + s.seq());
        b.putLong(MoeLowLatencyParamsDescriptor.WAIT_NS_OFFSET, base + s.waitNanos());
        b.putLong(MoeLowLatencyParamsDescriptor.BUFFER_STATE_OFFSET, base + s.bufferState(0));
        b.putLong(MoeLowLatencyParamsDescriptor.STATE_BYTES_OFFSET, s.stateBytes());
        b.putLong(MoeLowLatencyParamsDescriptor.ROUTE_SLOT_OFFSET, s.routeSlot());
        b.putLong(MoeLowLatencyParamsDescriptor.SEND_COUNT_OFFSET, s.sendCount());
        b.putLong(MoeLowLatencyParamsDescriptor.SEND_BASE_OFFSET, s.sendBase());
        b.putLong(MoeLowLatencyParamsDescriptor.SEND_DONE_OFFSET, s.sendDone());
        b.putLong(MoeLowLatencyParamsDescriptor.RECV_COUNT_SRC_OFFSET, s.recvCountSrc());
        b.putLong(MoeLowLatencyParamsDescriptor.RECV_COUNT_OFFSET, s.recvCount());
        b.putLong(MoeLowLatencyParamsDescriptor.COMBINED_OFFSET, s.combined());
        b.putLong(MoeLowLatencyParamsDescriptor.COMBINE_READY_OFFSET, s.combineReady());
        b.putLong(MoeLowLatencyParamsDescriptor.TABLES_OFFSET, s.tables(0));
        b.putLong(MoeLowLatencyParamsDescriptor.COMBINE_STAGE_OFFSET, s.combineStage(0));
        b.putLong(MoeLowLatencyParamsDescriptor.RECV_OFFSET_SRC_OFFSET, s.recvOffsetSrc());
        b.putLong(MoeLowLatencyParamsDescriptor.COMBINE_DONE_OFFSET, s.combineDone());
        b.putLong(MoeLowLatencyParamsDescriptor.TOKEN_STAGE_OFFSET, s.tokenStage(0));
        b.putInt(MoeLowLatencyParamsDescriptor.STAGE_ROW_BYTES_OFFSET, s.stageRowBytes());
        b.putInt(MoeLowLatencyParamsDescriptor.TAGGED_OFFSET, s.tagged() ? 1 : 0);
        b.putLong(MoeLowLatencyParamsDescriptor.TAG_COUNTS_OFFSET, s.tagCounts(0));
        b.putLong(MoeLowLatencyParamsDescriptor.TAG_ROWS_OFFSET, s.tagRows(0));
        b.putInt(MoeLowLatencyParamsDescriptor.TAG_COUNT_WORDS_OFFSET, s.tagCountWords());
        b.putInt(MoeLowLatencyParamsDescriptor.TAG_HEADER_WORDS_OFFSET, s.tagHeaderWords());
        b.putInt(MoeLowLatencyParamsDescriptor.TAG_SCALE_WORD_OFFSET, s.tagScaleWord());
        b.putInt(MoeLowLatencyParamsDescriptor.TAG_ROW_WORDS_OFFSET, s.tagRowWords());
        return b;
    }

    public Rank rank() {
        return rank;
    }

    public LowLatencyBuffer buffer() {
        return buffer;
    }

    public CudaStream stream() {
        return rank.stream();
    }

    /**
     * Recorded after the last half of any call queued on this rank. It records no time (an ordering event, cheaper to
     * record): time the calls with events of your own.
     */
    public CudaEvent lastEvent() {
        return done;
    }

    private DevicePointer at(long offset) {
        return memory.at(offset);
    }

    /**
     * The SMs of {@code rank}'s GPU divided by the ranks on it ({@link World#ranksOnGpuOf}), at least 1: the grid of
     * a kernel that spins until peers signal. Where ranks share a GPU, one rank's waiting blocks must leave room for
     * the kernels of the ranks it waits for; a grid over every (token, slice) would hold every SM and those kernels
     * could not start (seen on one H100 with 2 ranks: a combine that timed out). The same held for the whole
     * dispatch while its grid was two blocks per SM of the rank's share: with 2 ranks on one H100 each launched 132
     * blocks, which may cover all 132 SMs, and the first rank's wait for the other's counts timed out as if the other
     * never ran (500 experts and more, where the grid reaches that size even at few tokens). As we read it, what cannot
     * start beside them is the other rank's route kernel, one block of 1024 threads and 40 KiB of shared memory (two
     * dispatch blocks do fit on an SM).
     */
    public static int spinningBlocks(World world, Rank rank) {
        return Math.max(1, rank.device().multiprocessorCount() / Math.max(1, world.ranksOnGpuOf(rank.rank())));
    }

    /**
     * Blocks per token of the dispatch send when they fit in one wave: enough that each warp holds at most one
     * {@link MoeLowLatencyParamsDescriptor#SEND_CHUNK}-channel chunk of the row (2 at hidden 7168), since at decode
     * sizes the send's time is each warp's chain of instructions, not bandwidth; 1 where {@code rank} has a peer whose
     * transport {@linkplain Capability#PUTS_EACH_MESSAGE_FROM_ONE_BLOCK puts each message from one block}
     * (ibgda: one WQE per row goes out once the row's message is whole, which a single block knows).
     */
    static int rowParts(World world, Rank rank, int hidden) {
        for (int peer = 0; peer < world.size(); peer++) {
            if (world.transport(rank.rank(), peer).has(Capability.PUTS_EACH_MESSAGE_FROM_ONE_BLOCK)) {
                return 1;
            }
        }
        int chunks = (hidden + MoeLowLatencyParamsDescriptor.SEND_CHUNK - 1) / MoeLowLatencyParamsDescriptor.SEND_CHUNK;
        return Math.max(1, (chunks + TOKEN_WARPS - 1) / TOKEN_WARPS);
    }

    /** Blocks for one warp per (token, 256-channel slice) of the combine's sums. */
    private int sumBlocks(int tokens) {
        long slices = (s.config().hidden() + 255) / 256;
        return tokenBlocks(Math.toIntExact(tokens * slices));
    }

    /** Blocks of TOKEN_WARPS warps for {@code warps} warps, at least one. */
    private static int tokenBlocks(int warps) {
        return Math.max(1, (warps + TOKEN_WARPS - 1) / TOKEN_WARPS);
    }

    /**
     * Dispatch of this rank's tokens: {@code x} is {@code numTokens x hidden} BF16 (cast to FP8 on the fly when the
     * config says so), {@code topkIdx} {@code numTokens x topK} INT64 (-1 = none). Each token goes once to each
     * distinct expert of its top-k (io.gda4j.moe.check.MoeLowLatencyReference has the layout). With
     * {@code returnAfterSend} only the send half is queued: call {@link #receiveDispatch} before using the outputs.
     * Returns the call's ticket: its number and buffer.
     *
     * @throws IllegalArgumentException for a wrong type or shape, or more tokens than maxTokensPerRank
     * @throws IllegalStateException    when this dispatch's buffer is still held by the dispatch two calls back
     */
    public synchronized AlternatingBuffers.Ticket dispatch(DeviceTensor x, DeviceTensor topkIdx,
                                                           boolean returnAfterSend) {
        requireOpen();
        LowLatencyPart c = s.config();
        x.require("x", ElementType.BF16, -1, c.hidden());
        checkTokens(x.dim(0), c.maxTokensPerRank());
        int tokens = (int) x.dim(0);
        topkIdx.require("topkIdx", ElementType.INT64, tokens, c.topK());
        AlternatingBuffers.Ticket t = buffers.dispatch();
        int b = t.buffer();
        if (tagged != null) {
            return dispatchTagged(x, topkIdx, tokens, t, returnAfterSend);
        }
        // Parts only while one wave holds every block: past it (2 ranks on one H100: 128 tokens of 2 parts) the
        // blocks ran in two waves and the send took 0.027 ms where one part took 0.024 (512 tokens: 0.072, 0.056).
        int wave = returnAfterSend ? sendWave : dispatchWave;
        int parts = (long) tokens * rowParts <= wave ? rowParts : 1;
        // Where each (token, part) has a block of its own in one wave, the blocks route their tokens themselves
        // (each reads every top-k entry); otherwise the route kernel does it once, before the send.
        boolean fused = (long) tokens * parts <= wave && routeShared <= MAX_ROUTE_SHARED && !ROUTE_KERNEL_ALWAYS;
        if (!fused) {
            route.launch(1, ROUTE_THREADS, 0, rank.stream(), KernelArgs.create().struct(params).i32(b)
                    .pointer(topkIdx.pointer()).i32(tokens));
        }
        // Gathered rows cost the receive half a copy after the counts: below GATHER_MIN_TOKENS that latency was more
        // than the bytes saved.
        boolean gather = s.gathersRows() && tokens >= LowLatencySizing.GATHER_MIN_TOKENS;
        KernelArgs args = KernelArgs.create().pointer(rank.deviceView()).struct(params).i32(b).pointer(x.pointer())
                .pointer(topkIdx.pointer()).i32(tokens).i32(parts).i32(fused ? 1 : 0).i32(gather ? 1 : 0);
        int shared = fused ? routeShared : 0;
        if (returnAfterSend) {
            dispatchSend.launch(Math.max(1, tokens * parts), 32 * TOKEN_WARPS, shared, rank.stream(), args);
        } else {
            buffers.receive(t);
            // Every (token, part) and every local expert's wait in one grid that the GPU holds at once.
            dispatchWhole.launch(Math.min(wave, Math.max(tokens * parts, s.numLocalExperts())), 32 * TOKEN_WARPS,
                    shared, rank.stream(), args);
        }
        done.record(rank.stream());
        return t;
    }

    /**
     * How a tagged dispatch of {@code tokens} runs ({@link #taggedDispatch}): its blocks per token ({@code parts}), and
     * whether the call without the split is one kernel.
     */
    record TaggedDispatch(int parts, boolean oneKernel) {
        /** Send units: a count vector per rank, then every (token, part). */
        int units(int worldSize, int tokens) {
            return worldSize + tokens * parts;
        }
    }

    /**
     * The plan of a tagged dispatch of {@code tokens} in a world of {@code worldSize} ranks, where a send grid of
     * {@code sendWave} blocks and a whole one (it waits for what its own blocks send, so all must be resident) of
     * {@code dispatchWave} fit at once, and a token's row takes {@code rowParts} blocks at most ({@link #rowParts}).
     * Parts as for the counted dispatch, while one wave holds every (token, part) (without the split, with the count
     * vectors' units). A call without the split is one kernel while one wave holds all its send units; past that its
     * blocks would send several tokens each, one after another, before any of them received (2 ranks sharing an
     * H200, 512 tokens: one kernel of 66 blocks 0.109 ms, its halves apart 0.054 + 0.050), so it runs as the send
     * half, on as many blocks as it has units, and the receive half right behind it on the stream. {@code oneKernel}:
     * null for that rule, else whether always one kernel or never ({@value #ONE_KERNEL_DISPATCH_PROP_NAME}).
     */
    static TaggedDispatch taggedDispatch(int tokens, int worldSize, int rowParts, int sendWave, int dispatchWave,
                                         boolean split, Boolean oneKernel) {
        if (!split) {
            int parts = worldSize + (long) tokens * rowParts <= dispatchWave ? rowParts : 1;
            boolean oneWave = worldSize + (long) tokens * parts <= dispatchWave;
            if (oneKernel == null ? oneWave : oneKernel) {
                return new TaggedDispatch(parts, true);
            }
        }
        return new TaggedDispatch((long) tokens * rowParts <= sendWave ? rowParts : 1, false);
    }

    /** What {@value #ONE_KERNEL_DISPATCH_PROP_NAME} asks for: null for auto (the default), else true or false. */
    static Boolean oneKernelDispatchRequested() {
        String v = System.getProperty(ONE_KERNEL_DISPATCH_PROP_NAME, "auto").trim();
        if (v.equalsIgnoreCase("auto")) {
            return null;
        }
        if (v.equalsIgnoreCase("true") || v.equalsIgnoreCase("false")) {
            return Boolean.valueOf(v.toLowerCase(java.util.Locale.ROOT));
        }
        throw new IllegalArgumentException("-D" + ONE_KERNEL_DISPATCH_PROP_NAME + " must be auto, true or false, got '"
                + v + "'");
    }

    /**
     * The tagged dispatch: no route kernel at any token count (each block routes its own token), in one kernel or as
     * its two halves ({@link #taggedDispatch}). The whole call's grid covers every unit and every warp of the
     * receive ({@link #receiveBlocks}).
     */
    private AlternatingBuffers.Ticket dispatchTagged(DeviceTensor x, DeviceTensor topkIdx, int tokens,
                                                     AlternatingBuffers.Ticket t, boolean returnAfterSend) {
        TaggedDispatch plan = taggedDispatch(tokens, s.worldSize(), rowParts, tagged.sendWave(),
                tagged.dispatchWave(), returnAfterSend, oneKernelDispatch);
        int units = plan.units(s.worldSize(), tokens);
        KernelArgs args = KernelArgs.create().pointer(rank.deviceView()).struct(params).i32(t.buffer())
                .pointer(x.pointer()).pointer(topkIdx.pointer()).i32(tokens).i32(plan.parts());
        dispatchedTokens[t.buffer()] = tokens;
        if (!returnAfterSend) {
            buffers.receive(t);   // before anything is queued, in either form
        }
        if (plan.oneKernel()) {
            tagged.dispatch().launch(Math.min(tagged.dispatchWave(), Math.max(units, receiveBlocks(tokens))),
                    32 * TOKEN_WARPS, tagged.sharedBytes(), rank.stream(), args);
        } else {
            tagged.dispatchSend().launch(units, 32 * TOKEN_WARPS, tagged.sharedBytes(), rank.stream(), args);
            if (!returnAfterSend) {
                launchTaggedReceive(t.buffer(), tokens);
            }
        }
        done.record(rank.stream());
        return t;
    }

    /** The tagged dispatch's receive half on buffer {@code b}, whose dispatch sent {@code tokens} tokens. */
    private void launchTaggedReceive(int b, int tokens) {
        tagged.dispatchRecv().launch(Math.min(spinningBlocks, receiveBlocks(tokens)), 32 * TOKEN_WARPS,
                tagged.sharedBytes(), rank.stream(), KernelArgs.create().pointer(rank.deviceView()).struct(params)
                        .i32(b));
    }

    /**
     * Blocks for a warp per item of a tagged receive ({@link LowLatencySizing#tagWarpsPerRowIndex()}: a segment of
     * every other source's row, this rank's own row's header), for as many rows per source as this rank's own tokens.
     */
    private int receiveBlocks(int tokens) {
        return receiveBlocks(tokens, s.tagWarpsPerRowIndex());
    }

    static int receiveBlocks(int tokens, int warpsPerRowIndex) {
        return tokenBlocks(Math.toIntExact(Math.min(Integer.MAX_VALUE, (long) warpsPerRowIndex * tokens)));
    }

    /** Refuses more tokens than the buffers hold, saying what to do. */
    public static void checkTokens(long numTokens, int maxTokensPerRank) {
        if (numTokens < 0 || numTokens > maxTokensPerRank) {
            throw new IllegalArgumentException(numTokens + " tokens, but the buffers hold at most maxTokensPerRank = "
                    + maxTokensPerRank + " per rank; split the batch or make the buffer with a larger"
                    + " MoeConfig lowLatency maxTokensPerRank");
        }
    }

    /** The receive half of the dispatch of ticket {@code t}: the wait for every source's counts. */
    public synchronized void receiveDispatch(AlternatingBuffers.Ticket t) {
        requireOpen();
        buffers.receive(t);
        if (tagged != null) {
            launchTaggedReceive(t.buffer(), dispatchedTokens[t.buffer()]);
            done.record(rank.stream());
            return;
        }
        // A block per local expert (it waits for the counts, then unpacks staged rows), within the rank's share of
        // the SMs: a block takes several experts in turn.
        dispatchRecv.launch(Math.min(s.numLocalExperts(), spinningBlocks), RECV_THREADS, 0, rank.stream(),
                KernelArgs.create().pointer(rank.deviceView()).struct(params).i32(t.buffer()));
        done.record(rank.stream());
    }

    /** Frees the buffer of ticket {@code t} without a combine. */
    public synchronized void release(AlternatingBuffers.Ticket t) {
        requireOpen();
        buffers.release(t);
    }

    /**
     * Combine of {@code y} ({@code [numLocalExperts][slots][hidden]} BF16, the layout {@code dispatched} delivered)
     * back to the sources: this rank gets {@code numTokens x hidden} BF16, token t the sum over its top-k, in
     * increasing k, of {@code topkWeights[t][k] * y_row} (FP32 fma, one rounding to BF16 at the end). {@code topkIdx}
     * and {@code topkWeights} ({@code numTokens x topK}, INT64 and FP32) must be the routing {@code dispatched} sent.
     * {@code dispatched} is the ticket {@link #dispatch} returned on rank {@code owner} for {@code tokens} tokens.
     * With {@code returnAfterSend} only the send half is queued: call {@link #receiveCombine}. With
     * {@link #combineInput(int)} of the call's buffer as y where every pair of ranks is p2p or self, nothing is copied:
     * each rank reads its tokens' rows from the experts' ranks (every rank must then pass its combine input). Returns
     * whether the receive half pulls the rows from the experts' combine inputs.
     *
     * @throws IllegalArgumentException when y overlaps a combine input of this rank without being the one of
     *                                  {@code dispatched}
     */
    public synchronized boolean combine(DeviceTensor y, DeviceTensor topkIdx, DeviceTensor topkWeights,
                                        LowLatencyRank owner, AlternatingBuffers.Ticket dispatched, int tokens,
                                        boolean returnAfterSend) {
        requireOpen();
        LowLatencyPart c = s.config();
        if (owner != this) {
            throw new IllegalArgumentException("this dispatch belongs to rank " + owner.rank.rank()
                    + ", not rank " + rank.rank());
        }
        y.require("y", ElementType.BF16, s.numLocalExperts(), s.slotsPerExpert(), c.hidden());
        topkIdx.require("topkIdx", ElementType.INT64, tokens, c.topK());
        topkWeights.require("topkWeights", ElementType.FP32, tokens, c.topK());
        int b = dispatched.buffer();
        boolean own = false;   // y is the combine input of dispatched's buffer
        for (int other = 0; other < 2; other++) {
            DeviceTensor in = combineInput(other);
            if (other == b && y.address() == in.address()) {
                own = true;
            } else if (y.address() < in.address() + in.sizeBytes() && in.address() < y.address() + y.sizeBytes()) {
                throw new IllegalArgumentException("y overlaps the combine input of buffer " + other + " but is not"
                        + " the combine input of dispatch #" + dispatched.call() + " (buffer " + b + "); pass"
                        + " dispatched.combineInput() itself, or a tensor of your own");
            }
        }
        // Pulling needs every peer's heap mapped here; where some pair is staged the rows are put from the combine
        // input (no copy when y is it).
        boolean pull = own && !s.staged();
        buffers.combineSend(dispatched);
        combinedCall[b] = dispatched.call();
        if (tagged != null) {
            // Pulling moves nothing: one block SETs this rank's flag at every rank.
            int sendBlocks = pull ? 1 : s.numLocalExperts();
            if (returnAfterSend) {
                tagged.combineSend().launch(sendBlocks, COMBINE_SEND_THREADS, 0, rank.stream(), KernelArgs.create()
                        .pointer(rank.deviceView()).struct(params).i32(b).pointer(y.pointer()).i32(pull ? 1 : 0));
            } else {
                buffers.combineReceive(dispatched);
                tagged.combine().launch(Math.min(tagged.combineWave(), Math.max(sendBlocks, sumBlocks(tokens))),
                        COMBINE_SEND_THREADS, 0, rank.stream(), KernelArgs.create().pointer(rank.deviceView())
                                .struct(params).i32(b).pointer(y.pointer()).pointer(topkIdx.pointer())
                                .pointer(topkWeights.pointer()).i32(tokens).i32(pull ? 1 : 0));
            }
        } else if (returnAfterSend) {
            combineSend.launch(s.numLocalExperts(), COMBINE_SEND_THREADS, 0, rank.stream(), KernelArgs.create()
                    .pointer(rank.deviceView()).struct(params).i32(b).pointer(y.pointer()).i32(pull ? 1 : 0));
        } else {
            buffers.combineReceive(dispatched);
            combineWhole.launch(Math.min(combineWave, Math.max(s.numLocalExperts(), sumBlocks(tokens))),
                    COMBINE_SEND_THREADS, 0, rank.stream(), KernelArgs.create().pointer(rank.deviceView())
                            .struct(params).i32(b).pointer(y.pointer()).pointer(topkIdx.pointer())
                            .pointer(topkWeights.pointer()).i32(tokens).i32(pull ? 1 : 0));
        }
        done.record(rank.stream());
        return pull;
    }

    /**
     * The receive half of the combine of ticket {@code t} ({@code numTokens} tokens, routed by {@code topkIdx} and
     * weighted by {@code topkWeights}; {@code pull}: what {@link #combine} returned): the wait for the experts' rows
     * and the weighted sum. Frees the call's buffer.
     */
    public synchronized void receiveCombine(AlternatingBuffers.Ticket t, DeviceTensor topkIdx,
                                            DeviceTensor topkWeights, int numTokens, boolean pull) {
        requireOpen();
        buffers.combineReceive(t);
        // One warp per (token, 256-channel slice), as many as the GPU's share of this rank allows; the kernel loops
        // over the rest.
        (tagged != null ? tagged.combineRecv() : combineRecv).launch(Math.min(sumBlocks(numTokens), spinningBlocks),
                32 * TOKEN_WARPS, 0, rank.stream(), KernelArgs.create().pointer(rank.deviceView()).struct(params)
                        .i32(t.buffer()).pointer(topkIdx.pointer()).pointer(topkWeights.pointer()).i32(numTokens)
                        .i32(pull ? 1 : 0));
        done.record(rank.stream());
    }

    public synchronized AlternatingBuffers.State state(AlternatingBuffers.Ticket t) {
        requireOpen();
        return buffers.state(t);
    }

    /**
     * The output of the combine of dispatch {@code t}: throws IllegalStateException when the buffer closed, or when a
     * later combine used the same buffer (two calls later) and so writes its own output there.
     */
    public synchronized DeviceTensor combinedOutput(AlternatingBuffers.Ticket t, int tokens) {
        requireOpen();
        long latest = combinedCall[t.buffer()];
        if (latest != t.call()) {
            throw new IllegalStateException("output of the combine of dispatch #" + t.call() + ": the combine of dispatch #"
                    + latest + " used buffer " + t.buffer() + " since and writes its output there; read a combine's"
                    + " output before the combine two calls later");
        }
        return combined(t.buffer(), tokens);
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("rank " + rank.rank() + "'s MoeBuffer is closed and its memory"
                    + " freed; make a new MoeBuffer");
        }
    }

    // ---- tensors over buffer b

    private DeviceTensor heapTensor(long offset, long bytes, ElementType type, long... shape) {
        return DeviceTensor.of(DevicePointer.of(rank.heapBase() + buffer.heapRegion().offset() + offset), bytes, type,
                shape);
    }

    public DeviceTensor recvX(int b) {
        return heapTensor(s.recvX(b), s.recvXBytes(), s.config().dispatchType(), s.numLocalExperts(),
                s.slotsPerExpert(), s.config().hidden());
    }

    public DeviceTensor recvScales(int b) {
        return s.scalesPerRow() == 0 ? null : heapTensor(s.recvScales(b), s.recvScalesBytes(), ElementType.FP32,
                s.numLocalExperts(), s.slotsPerExpert(), s.scalesPerRow());
    }

    public DeviceTensor recvSource(int b) {
        return heapTensor(s.recvSrc(b), s.recvSrcBytes(), ElementType.INT32, s.numLocalExperts(), s.slotsPerExpert(),
                LowLatencySizing.SRC_INTS);
    }

    /** {@code [numLocalExperts][slots][hidden]} BF16: where a combine may read the expert outputs without a copy. */
    public DeviceTensor combineInput(int b) {
        long rows = (long) s.numLocalExperts() * s.slotsPerExpert();
        return heapTensor(s.combineInput(b), rows * 2L * s.config().hidden(), ElementType.BF16, s.numLocalExperts(),
                s.slotsPerExpert(), s.config().hidden());
    }

    public DeviceTensor countsPerSource(int b) {
        return DeviceTensor.of(at(s.bufferState(b) + s.recvCountSrc()), 4L * s.numLocalExperts() * s.worldSize(),
                ElementType.INT32, s.numLocalExperts(), s.worldSize());
    }

    public DeviceTensor counts(int b) {
        return DeviceTensor.of(at(s.bufferState(b) + s.recvCount()), 4L * s.numLocalExperts(), ElementType.INT32,
                s.numLocalExperts());
    }

    public DeviceTensor combined(int b, int tokens) {
        return DeviceTensor.of(at(s.bufferState(b) + s.combined()), s.combineReady() - s.combined(), ElementType.BF16,
                tokens, s.config().hidden());
    }

    /** Waits for this rank's queued work and returns the routing status of buffer b (0, or 1 + the bad entry). */
    public long readStatus(int b) {
        return read(at(s.status() + 8L * b), 8).getLong(0);
    }

    public int[] readInts(DeviceTensor t, int n) {
        ByteBuffer bb = read(t.pointer(), 4 * n);
        int[] a = new int[n];
        for (int i = 0; i < n; i++) {
            a[i] = bb.getInt(4 * i);
        }
        return a;
    }

    /** Nanoseconds this rank's low-latency kernels spent waiting for {@code peer}, summed over lanes and calls. */
    public long waitNanos(int peer) {
        requireOpen();
        if (peer < 0 || peer >= s.worldSize()) {
            throw new IllegalArgumentException("peer " + peer + " out of range 0.." + (s.worldSize() - 1));
        }
        return read(at(s.waitNanos() + 8L * peer), 8).getLong(0);
    }

    /**
     * Copies {@code dst.length} bytes at {@code address} to {@code dst} through pinned memory on the rank's stream: it
     * waits for this rank's queued work, and for nothing else.
     */
    public void copyToHost(DevicePointer address, byte[] dst) {
        requireOpen();
        memory.copyToHost(address, dst);
    }

    private ByteBuffer read(DevicePointer src, int bytes) {
        requireOpen();
        return memory.read(src, bytes);
    }

    /**
     * Waits for everything queued on the rank's stream, where the calls run (and captured calls are replayed). A call
     * that waits for a peer that never made it ends at the world's device wait timeout.
     */
    public void finishCalls() {
        if (!rank.stream().isClosed()) {
            rank.synchronize();
        }
    }

    /** Refuses every later call and frees the rank's memory; {@link LowLatencyBuffer#close()} waits for the calls first. */
    @Override
    public synchronized void close() {
        closed = true;
        memory.close();
    }
}
