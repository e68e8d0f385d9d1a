package io.gda4j.moe.ht;

import io.gda4j.cuda.CudaEvent;
import io.gda4j.cuda.CudaStream;
import io.gda4j.cuda.DevicePointer;
import io.gda4j.cuda.HostFunctions;
import io.gda4j.cuda.Kernel;
import io.gda4j.cuda.KernelArgs;
import io.gda4j.cuda.MappedHostMemory;
import io.gda4j.moe.core.MoeParamsHeaderDescriptor;
import io.gda4j.moe.core.MoeRankMemory;
import io.gda4j.moe.tensor.DeviceTensor;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.transport.Capability;
import io.gda4j.transport.HostTransfers;
import io.gda4j.transport.HostTransfers.Transfer;
import io.gda4j.transport.PeerLink;
import io.gda4j.world.ProcessWorld;
import io.gda4j.world.Rank;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntSupplier;

/**
 * One rank's high-throughput calls, as io.gda4j.moe.MoeRank offers them: {@link #layout}, {@link #dispatch},
 * {@link #combine}, with their inputs checked on the host before anything is launched, and the outputs in this rank's
 * memory (valid until the next call of the same kind on this rank). The calls run on {@link #callStream()}: the
 * rank's stream, or, with a communication stream ({@link HighThroughputPart#communicationStream()}), one this rank
 * owns; MoeRank's javadoc has the ordering contract. Host reads (layout's check, the counts, {@link #copyToHost})
 * copy through pinned memory on the call stream, so they wait for this rank's calls only.
 */
public final class HighThroughputRank implements AutoCloseable {
    private static final int READBACK_BYTES = 1 << 20;
    private static final int LAYOUT_THREADS = 128;

    private final HighThroughputBuffer buffer;
    private final Rank rank;
    private final HighThroughputSizing s;
    private final MoeRankMemory memory;
    /** The communication stream (owned), or null when the calls run on the rank's stream. */
    private final CudaStream communication;
    /** Where the calls run: {@link #communication}, or the rank's stream. */
    private final CudaStream calls;
    /** Recorded on the rank's stream at each call, for the communication stream to wait on; null without one. */
    private final CudaEvent computeQueued;
    /** Recorded after each call (memory.done()). */
    private final CudaEvent done;
    private final Kernel zero;
    private final Kernel nextCall;
    private final Kernel layoutKernel;
    private final Kernel dispatchKernel;
    private final Kernel combineKernel;
    private final Kernel dispatchDirectKernel;
    private final Kernel combineDirectKernel;
    private final Kernel combinePullKernel;
    private final Kernel exchangeKernel;
    private final Kernel packKernel;
    private final Kernel dispatchWaitKernel;
    private final Kernel combineCopyEnterKernel;
    private final Kernel combineSumKernel;
    /** Direct worlds: the layout exchange's host blocks (mapped memory the exchange kernel writes); null elsewhere. */
    private final MappedHostMemory exchangeHost;
    /**
     * Host transfers: per peer, the link's transfers where the peer is not DIRECT (null for direct peers and this
     * rank), and the host functions that hand a call's posts over; null elsewhere.
     */
    private final HostTransfers[] transfers;
    private final HostFunctions hostFunctions;
    private final CallGenerations generations;
    /** Layout exchanges queued on this rank (direct worlds); every rank makes the same layouts, so the same count. */
    private long exchanges;
    /** The sizes the host read of the latest exchange it waited for (null before any). */
    private ExchangedSizes exchanged;
    private boolean closed;

    HighThroughputRank(HighThroughputBuffer buffer, Rank rank) {
        this.buffer = buffer;
        this.rank = rank;
        this.s = buffer.sizing();
        this.generations = new CallGenerations(rank.rank());
        this.zero = rank.kernel(HighThroughputBuffer.LAYOUT_MODULE, "gda4j_moe_zero");
        this.layoutKernel = rank.kernel(HighThroughputBuffer.LAYOUT_MODULE, "gda4j_moe_layout");
        // Only the world's protocol is loaded (HighThroughputBuffer): rings, or direct stores.
        String ring = s.direct() ? null : HighThroughputBuffer.RING_MODULE;
        String direct = s.direct() ? HighThroughputBuffer.DIRECT_MODULE : null;
        this.nextCall = ring == null ? null : rank.kernel(ring, "gda4j_moe_next_call");
        this.dispatchKernel = ring == null ? null : rank.kernel(ring, "gda4j_moe_dispatch");
        this.combineKernel = ring == null ? null : rank.kernel(ring, "gda4j_moe_combine");
        this.dispatchDirectKernel = direct == null ? null : rank.kernel(direct, "gda4j_moe_dispatch_direct");
        this.combineDirectKernel = direct == null ? null : rank.kernel(direct, "gda4j_moe_combine_direct");
        this.combinePullKernel = direct == null ? null : rank.kernel(direct, "gda4j_moe_combine_pull");
        this.exchangeKernel = direct == null ? null : rank.kernel(direct, "gda4j_moe_layout_exchange");
        boolean ce = s.copyEngine();
        this.packKernel = ce ? rank.kernel(direct, "gda4j_moe_pack") : null;
        this.dispatchWaitKernel = ce ? rank.kernel(direct, "gda4j_moe_dispatch_wait") : null;
        this.combineCopyEnterKernel = ce ? rank.kernel(direct, "gda4j_moe_combine_copy_enter") : null;
        this.combineSumKernel = ce ? rank.kernel(direct, "gda4j_moe_combine_sum") : null;
        Kernel dispatching = s.direct() ? dispatchDirectKernel : dispatchKernel;
        Kernel combining = s.direct() ? combineDirectKernel : combineKernel;
        for (int threads : new int[] {dispatchThreads(), combineThreads()}) {
            int max = Math.min(dispatching.maxThreadsPerBlock(), combining.maxThreadsPerBlock());
            if (threads > max) {
                throw new IllegalArgumentException("MoE blocks of " + threads + " threads exceed the kernels' limit of " + max
                        + " on " + rank.device() + "; use fewer combineWarps");
            }
        }
        CudaStream comm = null;
        CudaEvent queued = null;
        MappedHostMemory host = null;
        try {
            if (s.config().communicationStream()) {
                comm = rank.context().createStream("rank " + rank.rank() + " MoE communication stream");
                queued = rank.context().createOrderingEvent();
            }
            if (s.direct()) {
                host = rank.context().allocateMappedHost(s.exchangeHostBytes());
                host.zero();
            }
            this.exchangeHost = host;
            this.memory = new MoeRankMemory(rank, s.deviceBytes(), READBACK_BYTES, s.params(), this::params);
        } catch (RuntimeException e) {
            if (host != null) {
                host.close();
            }
            if (queued != null) {
                queued.close();
            }
            if (comm != null) {
                comm.close();
            }
            throw e;
        }
        this.communication = comm;
        this.calls = comm == null ? rank.stream() : comm;
        this.computeQueued = queued;
        this.done = memory.done();
        this.transfers = s.hostTransfers() ? hostTransfers(rank) : null;
        this.hostFunctions = s.hostTransfers() ? new HostFunctions("rank " + rank.rank() + " MoE calls") : null;
    }

    /** Per peer the link's host-queued transfers, where the peer is not direct (the proxy); null elsewhere. */
    private static HostTransfers[] hostTransfers(Rank rank) {
        HostTransfers[] t = new HostTransfers[rank.worldSize()];
        for (int p = 0; p < t.length; p++) {
            if (p == rank.rank() || rank.transportTo(p).has(Capability.DIRECT)) {
                continue;
            }
            PeerLink link = rank.link(p);
            int peer = p;
            t[p] = (link == null ? java.util.Optional.<HostTransfers>empty() : link.hostTransfers()).orElseThrow(() ->
                    new IllegalStateException("rank " + rank.rank() + "'s link to rank " + peer + " over "
                            + rank.transportTo(peer).phrase() + " offers no host-queued transfers, though its"
                            + " transport has HOST_TRANSFERS"));
        }
        return t;
    }

    /**
     * Warps that serve one peer together in a sending or receiving block: as many as fit in 16 warps (512 threads, so
     * 128 registers a thread) up to 8 ranks, where each group can have a named barrier of its own (a block has 15);
     * one beyond. A single warp per peer was latency-bound: one 14 KiB row copy at a time.
     */
    public static int warpsPerPeer(int worldSize) {
        return worldSize <= 8 ? 16 / worldSize : 1;
    }

    /**
     * A dispatch block: in a direct world 16 warps, each storing whole tokens; with rings a group of warps per peer
     * (the channel's even block sends, its odd block receives).
     */
    private int dispatchThreads() {
        return s.direct() ? DIRECT_THREADS : 32 * s.worldSize() * warpsPerPeer(s.worldSize());
    }

    /**
     * A combine block: in a direct world 16 warps that send rows, then reduce tokens (or pull and reduce them); with
     * rings a group of warps per peer in the sending block, combineWarps in the reducing one.
     */
    private int combineThreads() {
        return s.direct() ? DIRECT_THREADS
                : 32 * Math.max(s.worldSize() * warpsPerPeer(s.worldSize()), s.config().combineWarps());
    }

    /** Direct worlds' blocks: 16 warps, 128 registers a thread (the kernels' __launch_bounds__(512)). */
    private static final int DIRECT_THREADS = 512;

    /** Two blocks per channel, a sender and a receiver: the buffer's residency check counts them. */
    public static int blocksPerRank(HighThroughputPart c) {
        return 2 * c.numChannels();
    }

    /**
     * The address of a received tensor's array ({@code offset}: its device-memory offset,
     * {@link HighThroughputSizing#recvX()} .. {@link HighThroughputSizing#recvEnd()}): in device memory, or in a direct
     * world in region {@code region} of the heap, where the peers write it.
     */
    private long recvAddress(long deviceBase, long offset, int region) {
        if (!s.direct()) {
            return deviceBase + offset;
        }
        return rank.heapBase() + buffer.heapRegion().offset() + s.directRecv() + region * s.directRecvBytes()
                + (offset - s.recvX());
    }

    private DevicePointer recvAt(long offset, int region) {
        return s.direct() ? DevicePointer.of(recvAddress(0, offset, region)) : at(offset);
    }

    /**
     * The heap region a dispatch's received tensors use in a direct world: dispatch {@code generation} (the host's
     * count, the same on every rank) alternates between the two, so no dispatch writes rows a peer may still read.
     */
    public static int region(long generation) {
        return (int) (generation & 1);
    }

    /** Where {@code peer}'s heap is mapped in this process: its rank's, or a CUDA IPC mapping of another process's. */
    private long peerHeapBase(int peer) {
        return buffer.world().localRank(peer).map(Rank::heapBase)
                .orElseGet(() -> ((ProcessWorld) buffer.world()).peerHeapAddress(peer));
    }

    /**
     * The address of a staging array or direct state word at {@code offset}: in device memory ({@code base}: its
     * start), or in this rank's heap region where host transfers keep them there ({@link HighThroughputSizing}).
     */
    private long movedAddress(long base, long offset) {
        return s.hostTransfers() ? rank.heapBase() + buffer.heapRegion().offset() + offset : base + offset;
    }

    /** The address of direct state word {@code word} (HighThroughputSizing.DSTATE_*). */
    private long directStateAddress(int word) {
        return movedAddress(at(0).address(), s.directState() + 8L * word);
    }

    private ByteBuffer params(long base) {
        HighThroughputPart c = s.config();
        long heap = buffer.heapRegion().offset();
        ByteBuffer b = ByteBuffer.allocateDirect(MoeParamsDescriptor.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        MoeParamsHeaderDescriptor.write(b, MoeParamsDescriptor.HEAD_OFFSET, MoeParamsDescriptor.PARAMS_MAGIC,
                s.worldSize(), rank.rank(), c.hidden(), c.dtype(), c.topK(), c.numExperts(), s.numLocalExperts());
        b.putInt(MoeParamsDescriptor.NUM_CHANNELS_OFFSET, c.numChannels());
        b.putInt(MoeParamsDescriptor.MAX_TOKENS_OFFSET, c.maxTokensPerRank());
        b.putInt(MoeParamsDescriptor.CHUNK_TOKENS_OFFSET, c.chunkTokens());
        b.putInt(MoeParamsDescriptor.RING_TOKENS_OFFSET, c.ringTokens());
        b.putInt(MoeParamsDescriptor.PAYLOAD_BYTES_OFFSET, s.payloadBytes());
        b.putInt(MoeParamsDescriptor.SCALES_PER_ROW_OFFSET, s.scalesPerRow());
        b.putInt(MoeParamsDescriptor.SCALES_OFFSET_OFFSET, s.scalesOffset());
        b.putInt(MoeParamsDescriptor.META_OFFSET_OFFSET, s.metaOffset());
        b.putInt(MoeParamsDescriptor.DISPATCH_ROW_BYTES_OFFSET, s.dispatchRowBytes());
        b.putInt(MoeParamsDescriptor.COMBINE_ROW_BYTES_OFFSET, s.combineRowBytes());
        b.putInt(MoeParamsDescriptor.COMBINE_WARPS_OFFSET, c.combineWarps());
        b.putLong(MoeParamsDescriptor.DISPATCH_RECV_RING_OFFSET, heap + s.dispatchRecvRing());
        b.putLong(MoeParamsDescriptor.DISPATCH_SEND_STAGE_OFFSET, heap + s.dispatchSendStage());
        b.putLong(MoeParamsDescriptor.COMBINE_RECV_RING_OFFSET, heap + s.combineRecvRing());
        b.putLong(MoeParamsDescriptor.COMBINE_SEND_STAGE_OFFSET, heap + s.combineSendStage());
        b.putLong(MoeParamsDescriptor.SIGNALS_OFFSET, heap + s.signals());
        b.putLong(MoeParamsDescriptor.TOKEN_SLOT_OFFSET, base + s.tokenSlot());
        b.putLong(MoeParamsDescriptor.CHANNEL_COUNT_OFFSET, base + s.channelCount());
        b.putLong(MoeParamsDescriptor.TOKENS_PER_RANK_OFFSET, base + s.tokensPerRank());
        b.putLong(MoeParamsDescriptor.TOKENS_PER_EXPERT_OFFSET, base + s.tokensPerExpert());
        b.putLong(MoeParamsDescriptor.LAYOUT_STATUS_OFFSET, base + s.layoutStatus());
        b.putLong(MoeParamsDescriptor.STATE_OFFSET, base + s.state());
        b.putLong(MoeParamsDescriptor.WAIT_NS_OFFSET, base + s.waitNanos());
        b.putLong(MoeParamsDescriptor.RECV_CHANNEL_OFFSET_OFFSET, base + s.recvChannelOffset());
        b.putLong(MoeParamsDescriptor.RECV_CHANNEL_COUNT_OFFSET, base + s.recvChannelCount());
        b.putLong(MoeParamsDescriptor.RECV_TOTAL_OFFSET, base + s.recvTotal());
        b.putLong(MoeParamsDescriptor.LOCAL_EXPERT_COUNTS_OFFSET, base + s.localExpertCounts());
        b.putLong(MoeParamsDescriptor.RECV_X_OFFSET, recvAddress(base, s.recvX(), 0));
        b.putLong(MoeParamsDescriptor.RECV_SCALES_OFFSET, recvAddress(base, s.recvScales(), 0));
        b.putLong(MoeParamsDescriptor.RECV_TOPK_IDX_OFFSET, recvAddress(base, s.recvTopkIdx(), 0));
        b.putLong(MoeParamsDescriptor.RECV_TOPK_WEIGHTS_OFFSET, recvAddress(base, s.recvTopkWeights(), 0));
        b.putLong(MoeParamsDescriptor.RECV_SRC_OFFSET, recvAddress(base, s.recvSrc(), 0));
        b.putLong(MoeParamsDescriptor.COMBINED_OFFSET, base + s.combined());
        b.putLong(MoeParamsDescriptor.DIRECT_RECV_OFFSET, heap + s.directRecv());
        b.putLong(MoeParamsDescriptor.COMBINE_LANDING_OFFSET, heap + s.combineLanding());
        b.putLong(MoeParamsDescriptor.DIRECT_RECV_BYTES_OFFSET, s.directRecvBytes());
        b.putLong(MoeParamsDescriptor.EXCHANGE_OFFSET, base + s.exchange());
        b.putLong(MoeParamsDescriptor.EXCHANGE_HOST_OFFSET, exchangeHost == null ? 0 : exchangeHost.deviceAddress());
        b.putLong(MoeParamsDescriptor.EXPERT_TABLE_OFFSET, heap + s.expertTable());
        b.putLong(MoeParamsDescriptor.DIRECT_STATE_OFFSET, movedAddress(base, s.directState()));
        b.putLong(MoeParamsDescriptor.CE_LANDING_OFFSET, heap + s.ceLanding());
        b.putLong(MoeParamsDescriptor.STAGE_X_OFFSET, movedAddress(base, s.stageX()));
        b.putLong(MoeParamsDescriptor.STAGE_SCALES_OFFSET, movedAddress(base, s.stageScales()));
        b.putLong(MoeParamsDescriptor.STAGE_TOPK_IDX_OFFSET, movedAddress(base, s.stageTopkIdx()));
        b.putLong(MoeParamsDescriptor.STAGE_TOPK_WEIGHTS_OFFSET, movedAddress(base, s.stageTopkWeights()));
        b.putLong(MoeParamsDescriptor.STAGE_SRC_OFFSET, movedAddress(base, s.stageSrc()));
        return b;
    }

    public Rank rank() {
        return rank;
    }

    /**
     * The rank's own stream, where the caller's work goes (the compute stream). With a communication stream, each call
     * waits for the work queued here before it, and this stream waits for a call only after
     * {@link #computeStreamWaitForLastCall()}.
     */
    public CudaStream stream() {
        return rank.stream();
    }

    /**
     * The stream the calls' kernels and host reads run on: the communication stream this rank owns when
     * {@link HighThroughputPart#communicationStream()} is on, else {@link #stream()}.
     */
    public CudaStream callStream() {
        return calls;
    }

    /**
     * Recorded on {@link #callStream()} after the last dispatch or combine queued on this rank, for other streams to
     * wait on ({@link CudaStream#waitEvent}). Recorded during a graph capture, it stands for captured work until the
     * next call outside the capture records it again. It records no time (an ordering event, cheaper to record):
     * time the calls with events of your own.
     */
    public CudaEvent lastEvent() {
        return done;
    }

    /**
     * Makes the work queued on {@link #stream()} from now on wait for the last dispatch or combine, and so for every
     * call before it (a {@code cuStreamWaitEvent} on {@link #lastEvent()}; the host does not wait): after it, that work
     * may read the calls' outputs and overwrite their inputs, and a graph capture begun on {@link #stream()} may end. Without a
     * communication stream the calls are on {@link #stream()} already, and this does nothing.
     */
    public void computeStreamWaitForLastCall() {
        if (communication != null) {
            rank.stream().waitEvent(done);
        }
    }

    /** With a communication stream, makes it wait for the work queued on the rank's stream so far (the fork). */
    private void callStreamWaitsForComputeStream() {
        if (communication != null) {
            computeQueued.record(rank.stream());
            communication.waitEvent(computeQueued);
        }
    }

    private DevicePointer at(long offset) {
        return memory.at(offset);
    }

    private void zero(long offset, int words) {
        if (words > 0) {
            zero.launch(Math.max(1, Math.min(64, (words + 255) / 256)), 256, 0, calls,
                    KernelArgs.create().pointer(at(offset)).i32(words));
        }
    }

    /**
     * The layout of this rank's top-k ({@code numTokens x topK} INT64, -1 = no expert), on the GPU, after the work
     * queued on {@link #stream()} before it. Waits for it (the step's one host synchronisation) and throws on an
     * expert index outside [-1, numExperts) before any dispatch can use it. Once past the host's checks (type, shape,
     * token count) it retires this rank's earlier handles, even when it throws: the kernel has rewritten the routing
     * they described. Returns the layout's generation and counts, which the MoeHandle carries. In a direct world a
     * layout that passes its checks also queues the layout exchange (io.gda4j.moe.MoeRank#layout says what it does).
     */
    public synchronized Layout layout(DeviceTensor topkIdx) {
        requireOpen();
        HighThroughputPart c = s.config();
        topkIdx.require("topkIdx", ElementType.INT64, -1, c.topK());
        int tokens = checkTokens(topkIdx.dim(0));
        long generation = generations.beginLayout();
        callStreamWaitsForComputeStream();
        zero(s.tokensPerRank(), s.worldSize());
        zero(s.tokensPerExpert(), c.numExperts());
        zero(s.layoutStatus(), 4);
        layoutKernel.launch(c.numChannels(), LAYOUT_THREADS, 0, calls, KernelArgs.create().pointer(at(s.params()))
                .pointer(topkIdx.pointer()).i32(tokens));
        ByteBuffer status = read(at(s.layoutStatus()), 8);
        long bad = status.getLong(0);
        if (bad != 0) {
            long index = bad - 1;
            long value = read(topkIdx.pointer().plusBytes(8 * index), 8).getLong(0);
            throw badExpert((int) (index / c.topK()), (int) (index % c.topK()), value, c.numExperts());
        }
        int[] perRank = ints(read(at(s.tokensPerRank()), 4 * s.worldSize()), s.worldSize());
        int[] perExpert = ints(read(at(s.tokensPerExpert()), 4 * c.numExperts()), c.numExperts());
        long exchange = 0;
        if (s.direct()) {
            exchange = ++exchanges;
            exchangeKernel.launch(1, EXCHANGE_THREADS, 0, calls, KernelArgs.create().pointer(rank.deviceView())
                    .pointer(at(s.params())).u64(exchange));
        }
        return new Layout(generation, tokens, perRank, perExpert, exchange);
    }

    /**
     * What a layout found: its generation (a later layout retires it), the tokens it covered, how many of them go to
     * each rank (each token once per rank), how many (token, top-k slot) pairs name each expert, and the number of
     * the layout exchange it queued (a direct world's; 0 elsewhere), which its dispatches and combines read.
     */
    public record Layout(long generation, int numTokens, int[] tokensPerRank, int[] tokensPerExpert, long exchange) {
    }

    /** The layout exchange's block: one block waits for every rank's counts. */
    private static final int EXCHANGE_THREADS = 512;
    /** The copy-engine calls' one-block steps (a wait, an entry): a thread per rank. */
    private static final int STEP_THREADS = 32;

    /** What the host read of a layout exchange, for the copy engines' sizes. */
    private record ExchangedSizes(long exchange, int[] destBase, int[] destRows, int[] srcBase, int[] srcRows) {
    }

    /**
     * The sizes of layout exchange {@code exchange}, from its host block: waits (on the host, no CUDA call, so a capture
     * may be under way) until the exchange kernel has stamped it, up to the world's wait timeout and a second more;
     * then the world's device error, if any, is thrown (a peer that never laid out: MoeBuffer.checkErrors names it),
     * else a timeout.
     */
    private ExchangedSizes exchanged(long exchange) {
        if (exchanged != null && exchanged.exchange() == exchange) {
            return exchanged;
        }
        int block = (int) ((exchange & 1) * s.exchangeHostBlockBytes());
        long patience = buffer.world().config().waitTimeout().toNanos() + 1_000_000_000L;
        long start = System.nanoTime();
        while (exchangeHost.getLongAcquire(block) != exchange) {
            if (System.nanoTime() - start > patience) {
                buffer.world().checkErrors();
                throw new IllegalStateException("rank " + rank.rank() + ": layout exchange #" + exchange + " did not"
                        + " finish within the wait timeout: every rank must make the same layouts");
            }
            Thread.onSpinWait();
        }
        int n = s.worldSize();
        int[][] v = new int[4][n];
        for (int r = 0; r < n; r++) {
            v[0][r] = exchangeHost.getInt(block + 8 + 4 * s.exchangeDestBaseWord(r));
            v[1][r] = exchangeHost.getInt(block + 8 + 4 * s.exchangeDestRowsWord(r));
            v[2][r] = exchangeHost.getInt(block + 8 + 4 * s.exchangeSrcBaseWord(r));
            v[3][r] = exchangeHost.getInt(block + 8 + 4 * s.exchangeSrcRowsWord(r));
        }
        exchanged = new ExchangedSizes(exchange, v[0], v[1], v[2], v[3]);
        return exchanged;
    }

    /** The refusal of top-k entry {@code [token][slot]}, {@code value}, that names no expert. */
    public static IllegalArgumentException badExpert(int token, int slot, long value, int numExperts) {
        return new IllegalArgumentException("topkIdx[" + token + "][" + slot + "] = " + value + " is not an expert:"
                + " indices must be in [0, " + numExperts + ") or -1 for none");
    }

    private int checkTokens(long tokens) {
        if (tokens > s.config().maxTokensPerRank()) {
            throw new IllegalArgumentException(tokens + " tokens, more than the configured maxTokensPerRank ("
                    + s.config().maxTokensPerRank() + "); make the MoeBuffer with a larger MoeConfig");
        }
        return (int) tokens;
    }

    /** Throws unless a handle of {@code owner}'s layout {@code generation} is this rank's current one. */
    private void requireLayout(HighThroughputRank owner, long generation) {
        if (owner != this) {
            throw new IllegalArgumentException("this handle belongs to rank " + owner.rank.rank() + ", not rank "
                    + rank.rank());
        }
        generations.requireLayout(generation);
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("rank " + rank.rank() + "'s MoeBuffer is closed and its memory freed; make a"
                    + " new MoeBuffer");
        }
        Throwable failed = hostFunctions == null ? null : hostFunctions.failure();
        if (failed != null) {
            throw new IllegalStateException("rank " + rank.rank() + ": handing an earlier call's transfers to the proxy"
                    + " failed (" + failed + "); its peers waited for them in vain: make a new MoeBuffer", failed);
        }
    }

    /**
     * Dispatch of this rank's tokens ({@code x}: {@code numTokens x hidden} of the config's type; {@code scales}:
     * {@code numTokens x hidden/128} FP32 for FP8, null for BF16; {@code topkIdx} INT64 and {@code topkWeights} FP32,
     * {@code numTokens x topK}, the same top-k the layout of {@code owner}'s handle saw: generation
     * {@code layoutGeneration}, {@code tokens} tokens, layout exchange {@code exchange}). Queued on
     * {@link #callStream()}, after the work queued on {@link #stream()} before it. Returns the dispatch's generation
     * (the next dispatch retires it).
     */
    public synchronized long dispatch(DeviceTensor x, DeviceTensor scales, DeviceTensor topkIdx,
                                      DeviceTensor topkWeights, HighThroughputRank owner, long layoutGeneration,
                                      int tokens, long exchange) {
        requireOpen();
        HighThroughputPart c = s.config();
        requireLayout(owner, layoutGeneration);
        x.require("x", c.dtype(), tokens, c.hidden());
        if (c.dtype() == ElementType.FP8_E4M3) {
            if (scales == null) {
                throw new IllegalArgumentException("an FP8 dispatch needs scales: " + tokens + " x " + s.scalesPerRow() + " FP32");
            }
            scales.require("scales", ElementType.FP32, tokens, s.scalesPerRow());
        } else if (scales != null) {
            throw new IllegalArgumentException("a BF16 dispatch takes no scales (pass null)");
        }
        topkIdx.require("topkIdx", ElementType.INT64, tokens, c.topK());
        topkWeights.require("topkWeights", ElementType.FP32, tokens, c.topK());
        // A copy-engine dispatch needs the exchange's sizes on the host: wait for them before anything is queued.
        ExchangedSizes sizes = s.copyEngine() ? exchanged(exchange) : null;
        long generation = generations.beginDispatch();
        int region = region(generation);
        int xparity = (int) (exchange & 1);
        callStreamWaitsForComputeStream();
        if (!s.direct()) {
            zero(s.localExpertCounts(), s.numLocalExperts());   // a direct world's come from the layout exchange
        }
        // The sequence number is raised on the GPU, not passed by value: a captured graph then makes a new call on
        // every replay. The direct kernels raise it themselves.
        if (!s.direct()) {
            nextCall.launch(1, 1, 0, calls, KernelArgs.create().pointer(at(s.callSeq())));
        }
        if (sizes != null) {
            dispatchByCopyEngines(x, scales, topkIdx, topkWeights, tokens, sizes, xparity, region);
        } else if (s.direct()) {
            dispatchDirectKernel.launch(blocksPerRank(c), dispatchThreads(), 0, calls, KernelArgs.create()
                    .pointer(rank.deviceView()).pointer(at(s.params())).pointer(x.pointer())
                    .address(scales == null ? 0 : scales.address()).pointer(topkIdx.pointer())
                    .pointer(topkWeights.pointer()).i32(tokens).pointer(at(s.callSeq())).i32(xparity).i32(region));
        } else {
            dispatchKernel.launch(blocksPerRank(c), dispatchThreads(), 0, calls, KernelArgs.create()
                    .pointer(rank.deviceView()).pointer(at(s.params())).pointer(x.pointer())
                    .address(scales == null ? 0 : scales.address()).pointer(topkIdx.pointer())
                    .pointer(topkWeights.pointer()).i32(tokens).pointer(at(s.callSeq())).i32(warpsPerPeer(s.worldSize())));
        }
        done.record(calls);
        return generation;
    }

    /**
     * The copy-engine dispatch: the pack kernel (this rank's own rows into its received tensors, every other rank's
     * into the staging arrays for it), then per peer one copy of each staged array to where the peer's tensors expect
     * this rank's rows and an 8-byte copy of the call's sequence into the peer's done word (copies on one stream run
     * in order: it lands after the rows), then a one-block kernel that waits for every peer's.
     */
    private void dispatchByCopyEngines(DeviceTensor x, DeviceTensor scales, DeviceTensor topkIdx,
                                       DeviceTensor topkWeights, int tokens, ExchangedSizes sizes, int xparity,
                                       int region) {
        HighThroughputPart c = s.config();
        packKernel.launch(blocksPerRank(c), DIRECT_THREADS, 0, calls, KernelArgs.create().pointer(rank.deviceView())
                .pointer(at(s.params())).pointer(x.pointer()).address(scales == null ? 0 : scales.address())
                .pointer(topkIdx.pointer()).pointer(topkWeights.pointer()).i32(tokens).pointer(at(s.callSeq()))
                .i32(xparity).i32(region));
        int n = s.worldSize();
        int me = rank.rank();
        long t = c.maxTokensPerRank();
        long[][] arrays = {
            {s.recvX(), s.stageX(), s.payloadBytes()},
            {s.recvScales(), s.stageScales(), 4L * s.scalesPerRow()},
            {s.recvTopkIdx(), s.stageTopkIdx(), 4L * c.topK()},
            {s.recvTopkWeights(), s.stageTopkWeights(), 4L * c.topK()},
            {s.recvSrc(), s.stageSrc(), 8},
        };
        long stage = movedAddress(at(0).address(), 0);
        long recv = buffer.heapRegion().offset() + s.directRecv() + region * s.directRecvBytes();
        List<List<Transfer>> perPeer = new ArrayList<>();
        for (int d = 0; d < n; d++) {
            List<Transfer> list = new ArrayList<>();
            long rows = sizes.destRows()[d];
            for (long[] a : arrays) {
                if (d != me && rows > 0 && a[2] > 0) {
                    list.add(new Transfer(stage + a[1] + d * t * a[2],
                            recv + (a[0] - s.recvX()) + sizes.destBase()[d] * a[2], rows * a[2]));
                }
            }
            perPeer.add(list);
        }
        sendToEveryPeer(perPeer, directStateAddress(HighThroughputSizing.DSTATE_DISPATCH_SEQ),
                buffer.heapRegion().offset() + s.signals() + 8L * s.dispatchDoneWord(me));
        dispatchWaitKernel.launch(1, STEP_THREADS, 0, calls, KernelArgs.create().pointer(rank.deviceView())
                .pointer(at(s.params())).pointer(at(s.callSeq())).i32(region));
    }

    /**
     * The copy-engine combine: a one-block entry, then per source one copy of the rows this rank received from it
     * (contiguous in y) into the source's copy-engine landing rows and an 8-byte copy of the call's sequence into its
     * done word, then the sums.
     */
    private void combineByCopyEngines(DeviceTensor y, DeviceTensor out, int tokens, ExchangedSizes sizes,
                                      int xparity) {
        HighThroughputPart c = s.config();
        combineCopyEnterKernel.launch(1, STEP_THREADS, 0, calls, KernelArgs.create().pointer(rank.deviceView())
                .pointer(at(s.params())).pointer(at(s.combineSeq())));
        int n = s.worldSize();
        int me = rank.rank();
        long row = s.combineRowBytes();
        List<List<Transfer>> perPeer = new ArrayList<>();
        for (int src = 0; src < n; src++) {
            List<Transfer> list = new ArrayList<>();
            long rows = sizes.srcRows()[src];
            if (src != me && rows > 0) {
                long from = y.address() + sizes.srcBase()[src] * row;
                if (transfers != null && transfers[src] != null && !transfers[src].readsAnyDeviceMemory()
                        && y.address() != combineInputAddress()) {
                    // A NIC reads only the heap: these rows go through the combine input first (HBM, once).
                    long staged = combineInputAddress() + sizes.srcBase()[src] * row;
                    calls.copyAsync(DevicePointer.of(staged), DevicePointer.of(from), rows * row);
                    from = staged;
                }
                list.add(new Transfer(from, buffer.heapRegion().offset() + s.ceLanding()
                        + (long) me * c.maxTokensPerRank() * row, rows * row));
            }
            perPeer.add(list);
        }
        sendToEveryPeer(perPeer, directStateAddress(HighThroughputSizing.DSTATE_COMBINE_SEQ),
                buffer.heapRegion().offset() + s.signals() + 8L * s.combineDoneWord(me));
        combineSumKernel.launch(blocksPerRank(c), DIRECT_THREADS, 0, calls, KernelArgs.create()
                .pointer(rank.deviceView()).pointer(at(s.params())).pointer(y.pointer()).pointer(out.pointer())
                .i32(tokens).pointer(at(s.combineSeq())).i32(xparity));
    }

    /**
     * Queues every other rank's transfers ({@code perPeer}, heap offsets of the peer's region) and then its signal:
     * the peer's word at heap offset {@code signalOffset} takes the value of this rank's word at
     * {@code counterAddress} (the call's sequence: one more each call). Peers whose link posts from the host go first,
     * in one host function for all of them, so their NICs start while the copy engines copy for the others; direct
     * peers get copies into their heaps as this process maps them, in the same order on the same stream.
     */
    private void sendToEveryPeer(List<List<Transfer>> perPeer, long counterAddress, long signalOffset) {
        int n = s.worldSize();
        int me = rank.rank();
        List<Runnable> posts = new ArrayList<>();
        for (int i = 1; i < n; i++) {
            int p = (me + i) % n;
            if (transfers != null && transfers[p] != null && !transfers[p].readsAnyDeviceMemory()) {
                transfers[p].queue(calls, perPeer.get(p), counterAddress, signalOffset, posts::add);
            }
        }
        if (!posts.isEmpty()) {
            hostFunctions.launch(calls, () -> posts.forEach(Runnable::run));
        }
        for (int i = 1; i < n; i++) {
            int p = (me + i) % n;
            if (transfers != null && transfers[p] != null) {
                if (transfers[p].readsAnyDeviceMemory()) {
                    transfers[p].queue(calls, perPeer.get(p), counterAddress, signalOffset, posts::add);
                }
                continue;
            }
            long heap = peerHeapBase(p);
            for (Transfer t : perPeer.get(p)) {
                calls.copyAsync(DevicePointer.of(heap + t.dstOffset()), DevicePointer.of(t.srcAddress()), t.bytes());
            }
            calls.copyAsync(DevicePointer.of(heap + signalOffset), DevicePointer.of(counterAddress), 8);
        }
    }

    /** Throws IllegalStateException, naming {@code what}, when the buffer closed or this rank dispatched again. */
    public synchronized void requireCurrentDispatch(long generation, String what) {
        requireOpen();
        generations.requireDispatch(generation, what);
    }

    /**
     * Where to write the expert outputs for a combine that pulls them (a direct world only: every pair of ranks p2p or
     * self): {@code maxRecvTokens x hidden} BF16 in this rank's part of the heap, rows in the order dispatch returned
     * them. Passing this tensor (or a view of its first rows, at the same address) as {@link #combine}'s {@code y}
     * lets each rank read its tokens' rows from the peers' heaps and sum them as they arrive, with nothing copied
     * first: the fastest combine. Every rank of a combine must then pass its own; a rank that passes a tensor of its
     * own while another pulls fails the combine on every rank with an error that says so. The same memory holds the
     * rows peers push to this rank when y is a tensor of the caller's: write it after this rank's dispatch, not
     * before. With the copy engines ({@link MoeRowPath#COPY_ENGINE}, and over the proxy) nothing is pulled: the rows
     * are copied from it as from any y, and over a NIC (the proxy's verbs handler) without the copy into the heap a y
     * of the caller's takes first.
     *
     * @throws IllegalStateException in a world whose combines go through rings (an ibgda pair, or the proxy with the
     *                               rows on the SMs)
     */
    public synchronized DeviceTensor combineInput() {
        requireOpen();
        if (!s.direct()) {
            throw new IllegalStateException("rank " + rank.rank() + ": a combine input in the heap needs the direct"
                    + " protocol (every pair of ranks p2p or self, or the copy engines over the proxy); this world's"
                    + " combines go through rings, so pass a tensor of your own");
        }
        return DeviceTensor.of(DevicePointer.of(combineInputAddress()), combineInputBytes(), ElementType.BF16,
                s.maxRecvTokens(), s.config().hidden());
    }

    private long combineInputAddress() {
        return rank.heapBase() + buffer.heapRegion().offset() + s.combineLanding();
    }

    private long combineInputBytes() {
        return (long) s.maxRecvTokens() * s.combineRowBytes();
    }

    /**
     * Combine of {@code y} ({@code rows x hidden} BF16, the rows in the order dispatch returned them; rows is at least
     * the received count when that was read ({@code knownRecvTokens}: -1 when not), else maxRecvTokens) back to the
     * source ranks, for the dispatch of generation {@code dispatchGeneration} with {@code owner}'s handle of layout
     * {@code layoutGeneration} (exchange {@code exchange}) and {@code numTokens} tokens. Returns this rank's {@code numTokens x hidden} BF16
     * sums, in a tensor this rank owns. Queued on {@link #callStream()}, after the work queued on {@link #stream()}
     * before it. With {@link #combineInput()} as y, the rows are pulled from the peers' heaps (every rank must then
     * do so).
     */
    public synchronized DeviceTensor combine(DeviceTensor y, HighThroughputRank owner, long layoutGeneration,
                                             long dispatchGeneration, int numTokens, long exchange,
                                             IntSupplier knownRecvTokens) {
        requireOpen();
        HighThroughputPart c = s.config();
        requireLayout(owner, layoutGeneration);
        requireCurrentDispatch(dispatchGeneration, "combine");
        y.require("y", ElementType.BF16, -1, c.hidden());
        int known = knownRecvTokens.getAsInt();
        long needed = known >= 0 ? known : s.maxRecvTokens();
        if (y.dim(0) < needed) {
            throw new IllegalArgumentException("y has " + y.dim(0) + " rows, the dispatch received " + (known >= 0
                    ? known + "" : "up to " + needed + " (read numRecvTokens() to pass fewer)"));
        }
        boolean pull = s.direct() && y.address() == combineInputAddress();
        if (s.direct() && !pull && y.address() < combineInputAddress() + combineInputBytes()
                && combineInputAddress() < y.address() + y.sizeBytes()) {
            throw new IllegalArgumentException("y overlaps combineInput() without starting where it does; pass"
                    + " combineInput() itself (or a view of its first rows) to combine from the heap, or a tensor of"
                    + " your own, which the peers' rows would otherwise overwrite");
        }
        DeviceTensor out = combined(numTokens);
        ExchangedSizes sizes = s.copyEngine() ? exchanged(exchange) : null;
        int xparity = (int) (exchange & 1);
        int region = region(dispatchGeneration);
        callStreamWaitsForComputeStream();
        if (sizes != null) {
            combineByCopyEngines(y, out, numTokens, sizes, xparity);
        } else if (pull) {
            combinePullKernel.launch(blocksPerRank(c), combineThreads(), 0, calls, KernelArgs.create()
                    .pointer(rank.deviceView()).pointer(at(s.params())).pointer(out.pointer())
                    .i32(numTokens).pointer(at(s.combineSeq())).i32(xparity));
        } else if (s.direct()) {
            combineDirectKernel.launch(blocksPerRank(c), combineThreads(), 0, calls, KernelArgs.create()
                    .pointer(rank.deviceView()).pointer(at(s.params())).pointer(y.pointer()).pointer(out.pointer())
                    .i32(numTokens).pointer(at(s.combineSeq())).i32(xparity).i32(region));
        } else {
            combineKernel.launch(blocksPerRank(c), combineThreads(), 0, calls, KernelArgs.create()
                    .pointer(rank.deviceView()).pointer(at(s.params())).pointer(y.pointer()).pointer(out.pointer())
                    .i32(numTokens).i32(warpsPerPeer(s.worldSize())));
        }
        done.record(calls);
        return out;
    }

    /** Nanoseconds this rank's kernels spent waiting for {@code peer}'s counters, summed over warps and calls. */
    public synchronized long waitNanos(int peer) {
        requireOpen();
        if (peer < 0 || peer >= s.worldSize()) {
            throw new IllegalArgumentException("peer " + peer + " out of range 0.." + (s.worldSize() - 1));
        }
        return read(at(s.waitNanos() + 8L * peer), 8).getLong(0);
    }

    /** The received rows of a dispatch whose received tensors are {@code region} ({@link #region(long)}). */
    public DeviceTensor recvX(int region) {
        return DeviceTensor.of(recvAt(s.recvX(), region), s.recvScales() - s.recvX(), s.config().dtype(),
                s.maxRecvTokens(), s.config().hidden());
    }

    public DeviceTensor recvScales(int region) {
        return s.scalesPerRow() == 0 ? null : DeviceTensor.of(recvAt(s.recvScales(), region),
                s.recvTopkIdx() - s.recvScales(), ElementType.FP32, s.maxRecvTokens(), s.scalesPerRow());
    }

    public DeviceTensor recvTopkIdx(int region) {
        return DeviceTensor.of(recvAt(s.recvTopkIdx(), region), s.recvTopkWeights() - s.recvTopkIdx(),
                ElementType.INT32, s.maxRecvTokens(), s.config().topK());
    }

    public DeviceTensor recvTopkWeights(int region) {
        return DeviceTensor.of(recvAt(s.recvTopkWeights(), region), s.recvSrc() - s.recvTopkWeights(),
                ElementType.FP32, s.maxRecvTokens(), s.config().topK());
    }

    public DeviceTensor recvSource(int region) {
        return DeviceTensor.of(recvAt(s.recvSrc(), region), s.recvEnd() - s.recvSrc(), ElementType.INT32,
                s.maxRecvTokens(), 2);
    }

    /**
     * Where the counts of a dispatch with layout exchange {@code exchange} are: the exchange's block of its parity in
     * a direct world, else the dispatch's own.
     */
    private long countsOffset(long exchange, int word, long ringOffset) {
        return s.direct() ? s.exchange() + (exchange & 1) * s.exchangeBlockBytes() + 4L * word : ringOffset;
    }

    public DeviceTensor localExpertCountsTensor(long exchange) {
        return DeviceTensor.of(at(countsOffset(exchange, s.exchangeExpertCountWord(0), s.localExpertCounts())),
                4L * s.numLocalExperts(), ElementType.INT32, s.numLocalExperts());
    }

    private DeviceTensor combined(int tokens) {
        return DeviceTensor.of(at(s.combined()), s.recvX() - s.combined(), ElementType.BF16, tokens,
                s.config().hidden());
    }

    public int readRecvTotal(long exchange) {
        return read(at(countsOffset(exchange, s.exchangeRecvTotalWord(), s.recvTotal())), 4).getInt(0);
    }

    public int[] readLocalExpertCounts(long exchange) {
        return ints(read(at(countsOffset(exchange, s.exchangeExpertCountWord(0), s.localExpertCounts())),
                4 * s.numLocalExperts()), s.numLocalExperts());
    }

    /**
     * Copies {@code dst.length} bytes of device memory at {@code address} to {@code dst} through pinned memory on
     * {@link #callStream()}: it waits for this rank's queued calls, and for nothing else (with a communication
     * stream, not for the caller's work on {@link #stream()}).
     */
    public synchronized void copyToHost(DevicePointer address, byte[] dst) {
        requireOpen();
        memory.copyToHost(calls, address, dst);
    }

    private ByteBuffer read(DevicePointer src, int bytes) {
        return memory.read(calls, src, bytes);
    }

    private static int[] ints(ByteBuffer b, int n) {
        int[] a = new int[n];
        for (int i = 0; i < n; i++) {
            a[i] = b.getInt(4 * i);
        }
        return a;
    }

    /**
     * Waits for everything queued on this rank's streams (the rank's own, and the communication stream if there is
     * one): the calls' kernels, and captured calls replayed there. A call that waits for a peer that never made it
     * ends at the world's device wait timeout.
     */
    public synchronized void finishCalls() {
        if (!rank.stream().isClosed()) {
            rank.synchronize();
        }
        if (communication != null && !communication.isClosed()) {
            rank.synchronize(communication);
        }
    }

    /**
     * Refuses every later call, waits for the calls queued on the communication stream, if there is one (they use the
     * memory freed next, and destroying a stream does not wait for its work), then frees the rank's memory and
     * destroys the stream. {@link HighThroughputBuffer#close()} waits for every rank's calls first
     * ({@link #finishCalls()}).
     */
    @Override
    public synchronized void close() {
        closed = true;
        try {
            if (communication != null && !communication.isClosed()) {
                rank.synchronize(communication);
            }
        } finally {
            try {
                memory.close();
            } finally {
                if (hostFunctions != null) {
                    hostFunctions.close();
                }
                if (exchangeHost != null) {
                    exchangeHost.close();
                }
                if (communication != null) {
                    computeQueued.close();
                    communication.close();
                }
            }
        }
    }
}
