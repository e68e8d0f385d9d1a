package io.gda4j.moe.check;

import io.gda4j.cuda.DeviceMemory;
import io.gda4j.moe.MoeBuffer;
import io.gda4j.moe.MoeDispatchResult;
import io.gda4j.moe.MoeHandle;
import io.gda4j.moe.MoeRank;
import io.gda4j.moe.ht.HighThroughputPart;
import io.gda4j.moe.ht.HighThroughputSizing;
import io.gda4j.moe.tensor.DeviceTensor;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.world.Rank;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * The high-throughput calls against {@link MoeReference} on the GPU: runs layout, dispatch and combine on every rank
 * this process drives with generated routings ({@link MoeRouting}) and compares each output with the reference, bit for
 * bit. A reference, like MoeReference: the library's GPU tests and {@code gda4j moe --check} share it; it times nothing
 * (the samples' rigs do). {@link #run} is the whole check; the tests also replay its calls in CUDA graphs with its
 * parts ({@link #upload}, {@link #checkDispatch}, {@link #checkCombine}). Input memory is allocated here, before any
 * kernel runs.
 */
public final class MoeReferenceCheck implements AutoCloseable {
    private final MoeBuffer buffer;
    private final HighThroughputSizing s;
    /** The ranks this process drives: all of them in one JVM, its own in a multi-process world. */
    private final int[] locals;
    private final DeviceMemory[] x;
    private final DeviceMemory[] scales;
    private final DeviceMemory[] topk;
    private final DeviceMemory[] weights;
    /** Expert outputs of a pushing combine, per local rank; null when the combines pull. */
    private final DeviceMemory[] y;
    /** Expert outputs go to each rank's {@link MoeRank#combineInput()} and combines pull them from there. */
    private final boolean pull;

    /** Combines from a tensor of each rank's own (the rows are pushed). */
    public MoeReferenceCheck(MoeBuffer buffer) {
        this(buffer, false);
    }

    /**
     * {@code combineFromHeap}: where the world allows it (every pair p2p or self), each rank's expert outputs are
     * written to its {@link MoeRank#combineInput()} and the combines pull them; elsewhere they are pushed.
     */
    public MoeReferenceCheck(MoeBuffer buffer, boolean combineFromHeap) {
        this.buffer = buffer;
        this.pull = combineFromHeap && buffer.sizing().direct();
        this.s = buffer.sizing();
        List<Rank> ranks = buffer.world().localRanks();
        this.locals = ranks.stream().mapToInt(Rank::rank).toArray();
        int n = s.worldSize();
        HighThroughputPart c = s.config();
        x = new DeviceMemory[n];
        scales = new DeviceMemory[n];
        topk = new DeviceMemory[n];
        weights = new DeviceMemory[n];
        y = new DeviceMemory[n];
        long t = c.maxTokensPerRank();
        for (Rank r : ranks) {
            int i = r.rank();
            x[i] = r.context().allocate(Math.max(16, t * s.payloadBytes()));
            scales[i] = r.context().allocate(Math.max(16, t * 4L * s.scalesPerRow()));
            topk[i] = r.context().allocate(Math.max(16, t * 8L * c.topK()));
            weights[i] = r.context().allocate(Math.max(16, t * 4L * c.topK()));
            if (!pull) {   // a pulling combine reads the rank's combine input in the heap instead
                y[i] = r.context().allocate((long) s.maxRecvTokens() * s.combineRowBytes());
            }
        }
    }

    /** Whether the combines pull the expert outputs from the ranks' heaps ({@link MoeRank#combineInput()}). */
    public boolean pullsCombine() {
        return pull;
    }

    /** Rank r's inputs as tensors of {@code tokens} rows: x, its FP8 scales (null without), top-k, weights. */
    public DeviceTensor x(int r, int tokens) {
        return tensor(x[r], s.config().dtype(), tokens, s.config().hidden());
    }

    public DeviceTensor scales(int r, int tokens) {
        return s.scalesPerRow() == 0 ? null : tensor(scales[r], ElementType.FP32, tokens, s.scalesPerRow());
    }

    public DeviceTensor topkIdx(int r, int tokens) {
        return tensor(topk[r], ElementType.INT64, tokens, s.config().topK());
    }

    public DeviceTensor topkWeights(int r, int tokens) {
        return tensor(weights[r], ElementType.FP32, tokens, s.config().topK());
    }

    /** Rank r's expert outputs as combine takes them: {@code rows} rows of its combine input or of its own tensor. */
    public DeviceTensor y(int r, long rows) {
        return pull ? buffer.rank(r).combineInput().reshape(rows, s.config().hidden())
                : tensor(y[r], ElementType.BF16, rows, s.config().hidden());
    }

    /** Writes rank r's expert outputs where {@link #y(int, long)} has them. */
    public void writeY(int r, byte[] rows) {
        if (pull) {
            buffer.rank(r).rank().writeHeap(buffer.heapRegion().offset() + s.combineLanding(), rows);
        } else {
            y[r].copyFromHost(0, rows, 0, rows.length);
        }
    }

    /**
     * One layout + dispatch + combine of routing {@code kind} with {@code tokens[r]} tokens on rank r, checked against
     * the reference. Returns a 64-bit hash of every rank's outputs (received rows, top-k, weights, combined rows).
     *
     * @throws IllegalStateException naming the rank, the output and the first differing row where they differ
     */
    public long run(MoeRouting.Kind kind, long seed, int[] tokens) {
        HighThroughputPart c = s.config();
        int n = s.worldSize();
        Random rnd = new Random(seed);
        MoeReference.Input[] in = new MoeReference.Input[n];
        for (int r = 0; r < n; r++) {
            int[] idx = MoeRouting.topk(kind, tokens[r], c.topK(), c.numExperts(), n, rnd);
            in[r] = upload(r, MoeRouting.input(s, r, tokens[r], idx, rnd));
        }
        MoeHandle[] handles = new MoeHandle[n];
        for (int r : locals) {
            handles[r] = buffer.rank(r).layout(topkIdx(r, tokens[r]));
            MoeReference.Layout want = MoeReference.layout(in[r].topkIdx(), tokens[r], c.topK(), c.numExperts(), n,
                    c.numChannels());
            expect(Arrays.equals(want.tokensPerRank(), handles[r].tokensPerRank()), r, "tokens per rank", 0);
            expect(Arrays.equals(want.tokensPerExpert(), handles[r].tokensPerExpert()), r, "tokens per expert", 0);
        }
        MoeDispatchResult[] got = new MoeDispatchResult[n];
        // Processes meet before each step: one that still reads its previous outputs must not receive new rows.
        buffer.world().barrier();
        for (int r : locals) {
            got[r] = buffer.rank(r).dispatch(x(r, tokens[r]), scales(r, tokens[r]), topkIdx(r, tokens[r]),
                    topkWeights(r, tokens[r]), handles[r]);
            buffer.rank(r).computeStreamWaitForLastCall();
        }
        long hash = 0xcbf29ce484222325L;
        MoeReference.Received[] want = new MoeReference.Received[n];
        short[][] yRows = new short[n][];
        for (int r : locals) {
            buffer.rank(r).rank().synchronize();
        }
        buffer.checkErrors();
        for (int r = 0; r < n; r++) {
            // Every rank's expected rows and expert outputs, in rank order (the reference combine reads them all);
            // this process checks and uploads its own.
            want[r] = MoeReference.dispatch(s, in, r);
            if (local(r)) {
                hash = fnv(hash, checkDispatch(r, got[r], want[r]));
            }
            yRows[r] = MoeRouting.bf16Rows(want[r].count(), c.hidden(), rnd);
            if (local(r)) {
                byte[] yb = shorts(yRows[r]);
                writeY(r, yb);
            }
        }
        return combineAndCheck(got, want, yRows, tokens, hash);
    }

    /** A call's routing on every rank: the top-k drawn, the inputs (uploaded on this process's ranks), the layouts. */
    public record Routed(int[][] topkIdx, MoeReference.Input[] inputs, MoeHandle[] handles) {
    }

    /**
     * Draws routing {@code kind} for every rank's {@code tokens} from {@code rnd} (every process draws every rank's,
     * the same sequence everywhere) with each rank's inputs, uploads this process's, then makes their layouts: what
     * the repeated and the captured checks set up before their calls.
     */
    public Routed route(MoeRouting.Kind kind, Random rnd, int[] tokens) {
        HighThroughputPart c = s.config();
        int n = s.worldSize();
        int[][] idx = new int[n][];
        MoeReference.Input[] in = new MoeReference.Input[n];
        MoeHandle[] handles = new MoeHandle[n];
        for (int r = 0; r < n; r++) {
            idx[r] = MoeRouting.topk(kind, tokens[r], c.topK(), c.numExperts(), n, rnd);
            in[r] = upload(r, MoeRouting.input(s, r, tokens[r], idx[r], rnd));
        }
        for (int r : locals) {
            handles[r] = buffer.rank(r).layout(topkIdx(r, tokens[r]));
        }
        return new Routed(idx, in, handles);
    }

    /**
     * One layout of routing {@code kind}, then {@code times} dispatches with it and new tokens and weights each, with
     * no combine between them, each checked against the reference; after each, the rows of the dispatch before it are
     * still where its result had them (they stay valid until the rank's next dispatch, which a peer's next dispatch
     * must not overwrite) and its getters are refused. Then a combine of the last. Returns the hash of the last
     * dispatch's rows and the combine.
     */
    public long runRepeatedDispatches(MoeRouting.Kind kind, long seed, int[] tokens, int times) {
        HighThroughputPart c = s.config();
        int n = s.worldSize();
        Random rnd = new Random(seed);
        Routed routed = route(kind, rnd, tokens);
        int[][] idx = routed.topkIdx();
        MoeReference.Input[] in = routed.inputs();
        MoeHandle[] handles = routed.handles();
        MoeDispatchResult[] got = new MoeDispatchResult[n];
        MoeDispatchResult[] before = new MoeDispatchResult[n];
        DeviceTensor[] beforeX = new DeviceTensor[n];
        MoeReference.Received[] want = new MoeReference.Received[n];
        MoeReference.Received[] beforeWant = new MoeReference.Received[n];
        long hash = 0;
        for (int i = 0; i < times; i++) {
            for (int r = 0; r < n; r++) {
                in[r] = upload(r, MoeRouting.input(s, r, tokens[r], idx[r], rnd));
            }
            buffer.world().barrier();
            for (int r : locals) {
                got[r] = buffer.rank(r).dispatch(x(r, tokens[r]), scales(r, tokens[r]), topkIdx(r, tokens[r]),
                        topkWeights(r, tokens[r]), handles[r]);
                buffer.rank(r).computeStreamWaitForLastCall();
            }
            for (int r : locals) {
                buffer.rank(r).rank().synchronize();
            }
            buffer.checkErrors();
            hash = 0xcbf29ce484222325L;
            for (int r = 0; r < n; r++) {
                want[r] = MoeReference.dispatch(s, in, r);
                if (!local(r)) {
                    continue;
                }
                hash = fnv(hash, checkDispatch(r, got[r], want[r]));
                if (before[r] != null) {
                    MoeDispatchResult old = before[r];
                    compareRows(r, "the rows of the dispatch before the last", read(buffer.rank(r), beforeX[r],
                            (long) beforeWant[r].count() * s.payloadBytes()), beforeWant[r].x(), s.payloadBytes());
                    boolean refused = false;
                    try {
                        old.recvX();
                    } catch (IllegalStateException e) {
                        refused = true;
                    }
                    expect(refused, r, "an older dispatch result's recvX() was not refused", 0);
                }
                before[r] = got[r];
                beforeX[r] = got[r].recvX();
                beforeWant[r] = want[r];
            }
        }
        short[][] yRows = new short[n][];
        for (int r = 0; r < n; r++) {
            yRows[r] = MoeRouting.bf16Rows(want[r].count(), c.hidden(), rnd);
            if (local(r)) {
                writeY(r, shorts(yRows[r]));
            }
        }
        return combineAndCheck(got, want, yRows, tokens, hash);
    }

    /** Every local rank's combine of {@code got} with expert outputs {@code yRows}, checked; returns the hash on. */
    private long combineAndCheck(MoeDispatchResult[] got, MoeReference.Received[] want, short[][] yRows, int[] tokens,
                                 long hash) {
        DeviceTensor[] out = new DeviceTensor[s.worldSize()];
        buffer.world().barrier();
        for (int r : locals) {
            out[r] = buffer.rank(r).combine(y(r, got[r].numRecvTokens()), got[r]);
            buffer.rank(r).computeStreamWaitForLastCall();
        }
        for (int r : locals) {
            buffer.rank(r).rank().synchronize();
        }
        buffer.checkErrors();
        for (int r : locals) {
            hash = fnv(hash, checkCombine(r, out[r], want, yRows, tokens[r]));
        }
        return hash;
    }

    public MoeBuffer buffer() {
        return buffer;
    }

    /** The ranks this process drives. */
    public int[] locals() {
        return locals.clone();
    }

    public boolean local(int r) {
        return x[r] != null;
    }

    /** Copies one rank's inputs to its device buffers when this process drives it; returns them. */
    public MoeReference.Input upload(int r, MoeReference.Input in) {
        if (!local(r)) {
            return in;
        }
        x[r].copyFromHost(0, in.x(), 0, in.x().length);
        byte[] sc = floats(in.scales());
        scales[r].copyFromHost(0, sc, 0, sc.length);
        byte[] tk = longs(in.topkIdx());
        topk[r].copyFromHost(0, tk, 0, tk.length);
        byte[] w = floats(in.topkWeights());
        weights[r].copyFromHost(0, w, 0, w.length);
        return in;
    }

    /** Compares rank r's dispatch outputs with the reference; returns the received rows (for the hash). */
    public byte[] checkDispatch(int r, MoeDispatchResult got, MoeReference.Received want) {
        HighThroughputPart c = s.config();
        MoeRank m = buffer.rank(r);
        int count = got.numRecvTokens();
        expect(count == want.count(), r, "received count " + count + " (reference " + want.count() + ")", 0);
        byte[] gx = read(m, got.recvX(), (long) count * s.payloadBytes());
        compareRows(r, "received rows", gx, want.x(), s.payloadBytes());
        if (s.scalesPerRow() > 0) {
            compareRows(r, "received scales", read(m, got.recvScales(), 4L * count * s.scalesPerRow()),
                    floats(want.scales()), 4 * s.scalesPerRow());
        }
        compareRows(r, "received top-k", read(m, got.recvTopkIdx(), 4L * count * c.topK()),
                ints(want.topkIdx()), 4 * c.topK());
        compareRows(r, "received weights", read(m, got.recvTopkWeights(), 4L * count * c.topK()),
                floats(want.topkWeights()), 4 * c.topK());
        int[] src = new int[2 * count];
        for (int i = 0; i < count; i++) {
            src[2 * i] = want.srcRank()[i];
            src[2 * i + 1] = want.srcToken()[i];
        }
        compareRows(r, "received sources", read(m, got.recvSource(), 8L * count), ints(src), 8);
        expect(Arrays.equals(want.localExpertCounts(), got.localExpertCounts()), r, "local expert counts", 0);
        return gx;
    }

    /** Compares rank r's combined rows with the reference sum; returns them (for the hash). */
    public byte[] checkCombine(int r, DeviceTensor out, MoeReference.Received[] want, short[][] yRows, int tokens) {
        byte[] gc = read(buffer.rank(r), out, (long) tokens * s.combineRowBytes());
        byte[] wc = shorts(MoeReference.combine(s.config().hidden(), want, yRows, r, tokens));
        compareRows(r, "combined rows", gc, wc, s.combineRowBytes());
        return gc;
    }

    private static DeviceTensor tensor(DeviceMemory m, ElementType t, long rows, long cols) {
        return DeviceTensor.of(m, t, rows, cols);
    }

    private static byte[] read(MoeRank m, DeviceTensor t, long bytes) {
        byte[] b = new byte[Math.toIntExact(bytes)];
        m.copyToHost(t.pointer(), b);
        return b;
    }

    private static void compareRows(int rank, String what, byte[] got, byte[] want, int rowBytes) {
        if (Arrays.equals(got, want)) {
            return;
        }
        int i = Arrays.mismatch(got, want);
        expect(false, rank, what + " differ from the reference (of " + want.length / Math.max(1, rowBytes) + " rows)",
                rowBytes == 0 ? 0 : i / rowBytes);
    }

    private static void expect(boolean ok, int rank, String what, int row) {
        if (!ok) {
            throw new IllegalStateException("MoE self-check failed on rank " + rank + ": " + what + ", first at row " + row);
        }
    }

    public static long fnv(long h, byte[] b) {
        for (byte v : b) {
            h = (h ^ (v & 0xff)) * 0x100000001b3L;
        }
        return h;
    }

    public static byte[] floats(float[] a) {
        ByteBuffer b = ByteBuffer.allocate(4 * a.length).order(ByteOrder.LITTLE_ENDIAN);
        for (float f : a) {
            b.putFloat(f);
        }
        return b.array();
    }

    public static byte[] ints(int[] a) {
        ByteBuffer b = ByteBuffer.allocate(4 * a.length).order(ByteOrder.LITTLE_ENDIAN);
        for (int v : a) {
            b.putInt(v);
        }
        return b.array();
    }

    public static byte[] longs(int[] a) {
        ByteBuffer b = ByteBuffer.allocate(8 * a.length).order(ByteOrder.LITTLE_ENDIAN);
        for (int v : a) {
            b.putLong(v);
        }
        return b.array();
    }

    public static byte[] shorts(short[] a) {
        ByteBuffer b = ByteBuffer.allocate(2 * a.length).order(ByteOrder.LITTLE_ENDIAN);
        for (short v : a) {
            b.putShort(v);
        }
        return b.array();
    }

    @Override
    public void close() {
        for (DeviceMemory[] group : new DeviceMemory[][] {x, scales, topk, weights, y}) {
            for (DeviceMemory m : group) {
                if (m != null) {
                    m.close();
                }
            }
        }
    }
}
