package io.gda4j.moe.check;

import io.gda4j.cuda.DeviceMemory;
import io.gda4j.moe.MoeBuffer;
import io.gda4j.moe.MoeLowLatencyCombine;
import io.gda4j.moe.MoeLowLatencyDispatch;
import io.gda4j.moe.ll.LowLatencyBuffer;
import io.gda4j.moe.ll.LowLatencyPart;
import io.gda4j.moe.ll.LowLatencyRank;
import io.gda4j.moe.ll.LowLatencySizing;
import io.gda4j.moe.tensor.DeviceTensor;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.world.Rank;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * The low-latency calls against {@link MoeLowLatencyReference} on the GPU: runs dispatch and combine on every rank
 * this process drives with generated routings and rows and compares every output with the reference, bit for bit
 * (valid slots only: the others hold stale data by design). A reference, like MoeLowLatencyReference: the library's
 * GPU tests and {@code gda4j moe --mode low-latency --check} share it; it times nothing (the samples' rigs do).
 * {@link #run} is the whole check; the tests also drive the calls themselves on its inputs ({@link #prepare}) and
 * check them with its parts ({@link #expectDispatch}, {@link #expectCombine}). Input memory is allocated here, before
 * any kernel runs.
 */
public final class MoeLowLatencyReferenceCheck implements AutoCloseable {
    private final MoeBuffer buffer;
    /** The buffer's low-latency part: its sizes, its heap region and the rows of a buffer by number. */
    private final LowLatencyBuffer part;
    private final LowLatencySizing s;
    private final int n;
    /** The ranks this process drives: all of them in one JVM, its own in a multi-process world. */
    private final int[] locals;
    private final DeviceMemory[] x;
    private final DeviceMemory[] topk;
    private final DeviceMemory[] weights;
    private final DeviceMemory[] y;
    /** Expert outputs go to each call's {@link MoeLowLatencyDispatch#combineInput()} and are passed from there. */
    private final boolean combineFromHeap;

    /** A check whose combines take the expert outputs from tensors of its own (the rows are pushed). */
    public MoeLowLatencyReferenceCheck(MoeBuffer buffer) {
        this(buffer, false);
    }

    /**
     * With {@code combineFromHeap} the expert outputs are written to each call's
     * {@link MoeLowLatencyDispatch#combineInput()} and passed from there: the combines pull them where every pair of
     * ranks is direct (they are put from there where some pair is staged).
     */
    public MoeLowLatencyReferenceCheck(MoeBuffer buffer, boolean combineFromHeap) {
        this.buffer = buffer;
        this.part = buffer.lowLatency();
        this.combineFromHeap = combineFromHeap;
        this.s = part.sizing();
        List<Rank> ranks = buffer.world().localRanks();
        this.n = s.worldSize();
        this.locals = ranks.stream().mapToInt(Rank::rank).toArray();
        LowLatencyPart c = s.config();
        long t = c.maxTokensPerRank();
        x = new DeviceMemory[n];
        topk = new DeviceMemory[n];
        weights = new DeviceMemory[n];
        y = new DeviceMemory[n];
        for (Rank r : ranks) {
            int i = r.rank();
            x[i] = r.context().allocate(t * 2L * c.hidden());
            topk[i] = r.context().allocate(t * 8L * c.topK());
            weights[i] = r.context().allocate(t * 4L * c.topK());
            if (!combineFromHeap) {   // from the heap, the buffers' combine inputs hold y (no second copy)
                y[i] = r.context().allocate((long) s.numLocalExperts() * s.slotsPerExpert() * 2L * c.hidden());
            }
        }
    }

    /** One routing's inputs on every rank, uploaded; {@link #expectDispatch} and {@link #expectCombine} check them. */
    public record Case(int[] tokens, MoeLowLatencyReference.Input[] inputs, float[][] weights, short[][] y) {
    }

    /**
     * Generates routing {@code kind} with {@code tokens[r]} tokens on rank r (and wide-range rows, weights, expert
     * outputs y for every slot) and uploads it into this check's device tensors. Synchronous copies: call it while no
     * kernel of these ranks runs (before a graph replay, for instance).
     */
    public Case prepare(MoeRouting.Kind kind, long seed, int[] tokens) {
        LowLatencyPart c = s.config();
        Random rnd = new Random(seed);
        MoeLowLatencyReference.Input[] in = new MoeLowLatencyReference.Input[n];
        float[][] w = new float[n][];
        short[][] ys = new short[n][];
        for (int r = 0; r < n; r++) {
            // Every process draws every rank's inputs (the same random sequence everywhere: the reference needs
            // them all) and uploads its own.
            int[] idx = MoeRouting.topk(kind, tokens[r], c.topK(), c.numExperts(), n, rnd);
            in[r] = new MoeLowLatencyReference.Input(tokens[r], MoeRouting.wideRangeRows(tokens[r], c.hidden(), rnd),
                    idx);
            w[r] = MoeRouting.weights(idx, rnd);
            ys[r] = MoeRouting.bf16Rows(s.numLocalExperts() * s.slotsPerExpert(), c.hidden(), rnd);
            if (x[r] == null) {
                continue;
            }
            upload(x[r], MoeReferenceCheck.shorts(in[r].x()));
            upload(topk[r], MoeReferenceCheck.longs(idx));
            upload(weights[r], MoeReferenceCheck.floats(w[r]));
            if (!combineFromHeap) {   // from the heap, run() writes them to the call's combine input
                upload(y[r], MoeReferenceCheck.shorts(ys[r]));
            }
        }
        return new Case(tokens.clone(), in, w, ys);
    }

    /** Overwrites rank r's uploaded top-k with {@code idx} (bad entries included: for tests of the device check). */
    public void overwriteTopk(int r, long[] idx) {
        ByteBuffer b = ByteBuffer.allocate(8 * idx.length).order(ByteOrder.LITTLE_ENDIAN);
        for (long v : idx) {
            b.putLong(v);
        }
        upload(topk[r], b.array());
    }

    private static void upload(DeviceMemory m, byte[] b) {
        if (b.length > 0) {
            m.copyFromHost(0, b, 0, b.length);
        }
    }

    /** Rank r's inputs as tensors: x, topkIdx, topkWeights, y. */
    public DeviceTensor x(int r, int tokens) {
        return DeviceTensor.of(x[r], ElementType.BF16, tokens, s.config().hidden());
    }

    public DeviceTensor topkIdx(int r, int tokens) {
        return DeviceTensor.of(topk[r], ElementType.INT64, tokens, s.config().topK());
    }

    public DeviceTensor topkWeights(int r, int tokens) {
        return DeviceTensor.of(weights[r], ElementType.FP32, tokens, s.config().topK());
    }

    /** Rank r's expert outputs in a tensor of the check's own (a check that combines from its own tensors). */
    public DeviceTensor y(int r) {
        if (y[r] == null) {
            throw new IllegalStateException("this check combines from the heap: its expert outputs are in each call's"
                    + " combineInput(), see y(r, dispatch)");
        }
        return DeviceTensor.of(y[r], ElementType.BF16, s.numLocalExperts(), s.slotsPerExpert(), s.config().hidden());
    }

    /** Rank r's expert outputs as its combine of {@code d} takes them: d's combine input, or {@link #y(int)}. */
    public DeviceTensor y(int r, MoeLowLatencyDispatch d) {
        return combineFromHeap ? d.combineInput() : y(r);
    }

    /**
     * Dispatch and combine of one prepared case on every rank; with {@code split} every rank first queues its send
     * half and then its receive half (both calls). Checks everything and returns a hash of every rank's outputs.
     *
     * @throws IllegalStateException naming the rank, the output and the first differing row where they differ
     */
    public long run(MoeRouting.Kind kind, long seed, int[] tokens, boolean split) {
        Case c = prepare(kind, seed, tokens);
        MoeLowLatencyDispatch[] d = new MoeLowLatencyDispatch[n];
        // Processes meet before each step: one still reading its previous outputs must not receive new rows.
        buffer.world().barrier();
        for (int r : locals) {
            d[r] = buffer.rank(r).lowLatencyDispatch(x(r, tokens[r]), topkIdx(r, tokens[r]), split);
        }
        if (split) {
            for (int r : locals) {
                d[r].receive();
            }
        }
        MoeLowLatencyCombine[] out = new MoeLowLatencyCombine[n];
        int[] buffers = new int[n];
        for (int r : locals) {
            d[r].checkRouting();   // also the host sync that lets the reads below see this call's buffer
            buffers[r] = d[r].buffer();
        }
        long hash = expectDispatch(c, buffers);
        if (combineFromHeap) {
            writeCombineInputs(c, buffers);   // every stream is idle here (expectDispatch synchronized them)
        }
        buffer.world().barrier();
        for (int r : locals) {
            out[r] = buffer.rank(r).lowLatencyCombine(y(r, d[r]), topkIdx(r, tokens[r]), topkWeights(r, tokens[r]),
                    d[r], split);
        }
        if (split) {
            for (int r : locals) {
                out[r].receive();
            }
        }
        DeviceTensor[] o = new DeviceTensor[n];
        for (int r : locals) {
            o[r] = out[r].output();
        }
        return expectCombine(c, o, hash);
    }

    /**
     * Writes case {@code c}'s expert outputs of each local rank r into the combine input of its buffer
     * {@code buffers[r]}, where a combine from the heap reads them. Synchronous copies: call it while no kernel of
     * these ranks runs.
     */
    public void writeCombineInputs(Case c, int[] buffers) {
        for (int r : locals) {
            buffer.rank(r).rank().writeHeap(part.heapRegion().offset() + s.combineInput(buffers[r]),
                    MoeReferenceCheck.shorts(c.y()[r]));
        }
    }

    /**
     * Checks every rank's dispatch outputs in buffer {@code buffers[r]} against the case (after the calls completed:
     * it synchronizes every rank's stream and throws the world's device errors first). Returns their hash.
     */
    public long expectDispatch(Case c, int[] buffers) {
        LowLatencyPart cfg = s.config();
        for (int r : locals) {
            buffer.rank(r).rank().synchronize();
        }
        buffer.checkErrors();
        long hash = 0xcbf29ce484222325L;
        int rows = s.numLocalExperts() * s.slotsPerExpert();
        for (int r : locals) {
            LowLatencyRank m = part.rank(r);
            MoeLowLatencyReference.Received want = MoeLowLatencyReference.dispatch(s, c.inputs(), r);
            int b = buffers[r];
            int[] perSource = m.readInts(m.countsPerSource(b), s.numLocalExperts() * n);
            expect(Arrays.equals(want.countPerSource(), perSource), r, "rows per (expert, source) "
                    + Arrays.toString(perSource) + ", reference " + Arrays.toString(want.countPerSource()), 0);
            expect(Arrays.equals(want.count(), m.readInts(m.counts(b), s.numLocalExperts())), r, "rows per expert", 0);
            byte[] gx = read(m, m.recvX(b), (long) rows * s.payloadBytes());
            byte[] gs = s.scalesPerRow() == 0 ? new byte[0] : read(m, m.recvScales(b), 4L * rows * s.scalesPerRow());
            byte[] gsrc = read(m, m.recvSource(b), 4L * rows * LowLatencySizing.SRC_INTS);
            byte[] ws = MoeReferenceCheck.floats(want.scales());
            byte[] wsrc = MoeReferenceCheck.ints(want.src());
            for (int row = 0; row < rows; row++) {
                if (!want.valid(row / s.slotsPerExpert(), row % s.slotsPerExpert())) {
                    continue;
                }
                compare(r, "received rows", gx, want.x(), row, s.payloadBytes());
                compare(r, "received scales", gs, ws, row, 4 * s.scalesPerRow());
                compare(r, "source records", gsrc, wsrc, row, 4 * LowLatencySizing.SRC_INTS);
                hash = MoeReferenceCheck.fnv(hash, Arrays.copyOfRange(gx, row * s.payloadBytes(), (row + 1) * s.payloadBytes()));
                hash = MoeReferenceCheck.fnv(hash, Arrays.copyOfRange(gs, row * 4 * s.scalesPerRow(),
                        (row + 1) * 4 * s.scalesPerRow()));
            }
            if (cfg.dispatchType() == ElementType.FP8_E4M3) {
                hash = MoeReferenceCheck.fnv(hash, new byte[] {1});
            }
        }
        return hash;
    }

    /** Checks every rank's combine output {@code out[r]} against the case; returns {@code hash} extended with them. */
    public long expectCombine(Case c, DeviceTensor[] out, long hash) {
        LowLatencyPart cfg = s.config();
        for (int r : locals) {
            buffer.rank(r).rank().synchronize();
        }
        buffer.checkErrors();
        for (int r : locals) {
            int tokens = c.tokens()[r];
            byte[] got = read(part.rank(r), out[r], 2L * tokens * cfg.hidden());
            byte[] want = MoeReferenceCheck.shorts(MoeLowLatencyReference.combine(s, r, c.inputs()[r].topkIdx(),
                    c.weights()[r], tokens, c.y()));
            for (int t = 0; t < tokens; t++) {
                compare(r, "combined rows", got, want, t, 2 * cfg.hidden());
            }
            hash = MoeReferenceCheck.fnv(hash, got);
        }
        return hash;
    }

    private static byte[] read(LowLatencyRank m, DeviceTensor t, long bytes) {
        byte[] b = new byte[Math.toIntExact(bytes)];
        m.copyToHost(t.pointer(), b);
        return b;
    }

    private static void compare(int rank, String what, byte[] got, byte[] want, int row, int rowBytes) {
        if (rowBytes == 0) {
            return;
        }
        int from = row * rowBytes;
        if (!Arrays.equals(got, from, from + rowBytes, want, from, from + rowBytes)) {
            ByteBuffer g = ByteBuffer.wrap(got, from, rowBytes).order(ByteOrder.LITTLE_ENDIAN);
            int at = Arrays.mismatch(Arrays.copyOfRange(got, from, from + rowBytes),
                    Arrays.copyOfRange(want, from, from + rowBytes));
            expect(false, rank, what + " differ from the reference at byte " + at + " (got 0x"
                    + Integer.toHexString(g.get(from + at) & 0xff) + ", want 0x" + Integer.toHexString(want[from + at] & 0xff)
                    + ")", row);
        }
    }

    private static void expect(boolean ok, int rank, String what, int row) {
        if (!ok) {
            throw new IllegalStateException("low-latency MoE self-check failed on rank " + rank + ": " + what
                    + ", at row " + row);
        }
    }

    @Override
    public void close() {
        for (DeviceMemory[] group : new DeviceMemory[][] {x, topk, weights, y}) {
            for (DeviceMemory m : group) {
                if (m != null) {
                    m.close();
                }
            }
        }
    }
}
