package io.gda4j.samples.moe;

import io.gda4j.cuda.CudaEvent;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.moe.MoeBuffer;
import io.gda4j.moe.MoeLowLatencyCombine;
import io.gda4j.moe.MoeLowLatencyDispatch;
import io.gda4j.moe.MoeRank;
import io.gda4j.moe.check.MoeRouting;
import io.gda4j.moe.ll.LowLatencyPart;
import io.gda4j.moe.ll.LowLatencyRank;
import io.gda4j.moe.ll.LowLatencySizing;
import io.gda4j.moe.tensor.DeviceTensor;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.world.Rank;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Random;

/**
 * Times low-latency dispatch and combine on every rank this process drives, for {@code gda4j moe --mode low-latency}:
 * the whole calls and their send and receive halves, event-timed behind a {@link LaunchGate} ({@link GatedSteps}).
 * Outputs are not checked (the library's MoeLowLatencyReferenceCheck does that, for {@code --check}). Input memory is
 * allocated here, before any kernel runs.
 */
public final class MoeLowLatencyTimingRig implements AutoCloseable {
    /** The expert outputs' every BF16 value: finite (about 0.75), so the weighted sums stay ordinary numbers. */
    private static final byte Y_BYTE = 0x3F;
    /** Where each input lies in a rank's row of {@link #inputs}. */
    private static final int X = 0, TOPK = 1, WEIGHTS = 2, Y = 3;

    private final MoeBuffer buffer;
    private final LowLatencySizing s;
    private final int n;
    /** The ranks this process drives: all of them in one JVM, its own in a multi-process world. */
    private final int[] locals;
    /** Per rank: x, top-k, weights; and the expert outputs in a tensor of the rig's (null: they are in the heap). */
    private final DeviceMemory[][] inputs;
    private final boolean combineFromHeap;

    /**
     * With {@code combineFromHeap} the combines take the expert outputs from each call's
     * {@link MoeLowLatencyDispatch#combineInput()}: they pull them where every pair of ranks is direct.
     */
    public MoeLowLatencyTimingRig(MoeBuffer buffer, boolean combineFromHeap) {
        this.buffer = buffer;
        this.combineFromHeap = combineFromHeap;
        this.s = buffer.lowLatency().sizing();
        this.n = s.worldSize();
        List<Rank> ranks = buffer.world().localRanks();
        this.locals = ranks.stream().mapToInt(Rank::rank).toArray();
        LowLatencyPart c = s.config();
        long t = c.maxTokensPerRank();
        long[] bytes = new long[Y + 1];
        bytes[X] = t * 2L * c.hidden();
        bytes[TOPK] = t * 8L * c.topK();
        bytes[WEIGHTS] = t * 4L * c.topK();
        bytes[Y] = (long) s.numLocalExperts() * s.slotsPerExpert() * 2L * c.hidden();
        inputs = new DeviceMemory[n][];
        try {
            for (Rank r : ranks) {
                DeviceMemory[] m = new DeviceMemory[Y + 1];
                inputs[r.rank()] = m;
                for (int k = X; k <= (combineFromHeap ? WEIGHTS : Y); k++) {
                    m[k] = r.context().allocate(bytes[k]);
                }
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /**
     * Event-timed calls, per iteration the slowest rank's time (ms): the whole dispatch and combine as a user calls
     * them (no split, no event between the kernels), and their send and receive halves (made with the split, events
     * between the halves on each rank's stream; a receive half includes the wait for the slowest peer).
     */
    public record Timing(double[] dispatchMillis, double[] combineMillis, double[] dispatchSendMillis,
                         double[] dispatchReceiveMillis, double[] combineSendMillis, double[] combineReceiveMillis) {
    }

    /**
     * The most blocks a low-latency kernel that waits for peers (the receive halves) launches on a rank this process
     * drives: its GPU's SMs over the ranks on that GPU. The send halves size their grids by tokens and local experts.
     */
    public int waitingBlocksPerRank() {
        return LowLatencyRank.spinningBlocks(buffer.world(), buffer.world().rank(locals[0]));
    }

    /**
     * Uploads routing {@code kind} (and rows and weights), then runs {@code warmup + iterations} dispatch + combine
     * pairs on every rank without the split, and as many with it, timed with events on each rank's stream. Each
     * iteration is queued on every local rank behind a {@link LaunchGate} and then released at once, so the times
     * start together on every rank and leave out the host's launches; in a world of several processes the gate's
     * start line also leaves out the gap between the processes' launches.
     */
    public Timing time(MoeRouting.Kind kind, long seed, int[] tokens, int warmup, int iterations) {
        upload(kind, seed, tokens);
        try (GatedSteps steps = new GatedSteps(buffer.world(), 5)) {
            double[][] whole = steps.time(warmup, iterations, new int[][] {{0, 2}, {2, 4}}, buffer::checkErrors,
                    events -> queueStep(events, tokens, false), i -> { });
            double[][] halves = steps.time(warmup, iterations, new int[][] {{0, 1}, {1, 2}, {2, 3}, {3, 4}},
                    buffer::checkErrors, events -> queueStep(events, tokens, true), i -> { });
            return new Timing(whole[0], whole[1], halves[0], halves[1], halves[2], halves[3]);
        }
    }

    /**
     * Generates routing {@code kind} with {@code tokens[r]} tokens on rank r, with rows and weights, and uploads each
     * local rank's; the expert outputs y are not generated on the host but filled on the GPU with one finite BF16
     * value: a random y of every slot would cost gigabytes of host memory and minutes at 512 tokens
     * (numLocalExperts x maxTokens x ranks x hidden values per rank). Synchronous copies: no kernel of these ranks runs.
     */
    private void upload(MoeRouting.Kind kind, long seed, int[] tokens) {
        LowLatencyPart c = s.config();
        Random rnd = new Random(seed);
        for (int r = 0; r < n; r++) {
            // Every process draws every rank's inputs (the same random sequence everywhere) and uploads its own.
            int[] idx = MoeRouting.topk(kind, tokens[r], c.topK(), c.numExperts(), n, rnd);
            short[] rows = MoeRouting.wideRangeRows(tokens[r], c.hidden(), rnd);
            float[] w = MoeRouting.weights(idx, rnd);
            DeviceMemory[] m = inputs[r];
            if (m == null) {
                continue;
            }
            ByteBuffer xb = littleEndian(2 * rows.length);
            xb.asShortBuffer().put(rows);
            copy(m[X], xb);
            ByteBuffer kb = littleEndian(8 * idx.length);
            for (int e : idx) {
                kb.putLong(e);
            }
            copy(m[TOPK], kb);
            ByteBuffer wb = littleEndian(4 * w.length);
            wb.asFloatBuffer().put(w);
            copy(m[WEIGHTS], wb);
            if (combineFromHeap) {
                for (int b = 0; b < 2; b++) {   // never written by the kernels: both buffers keep it
                    buffer.rank(r).rank().fillHeap(buffer.lowLatency().heapRegion().offset() + s.combineInput(b),
                            (long) s.numLocalExperts() * s.slotsPerExpert() * 2L * c.hidden(), Y_BYTE);
                }
            } else {
                m[Y].fill(Y_BYTE);
            }
        }
    }

    private static ByteBuffer littleEndian(int bytes) {
        return ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static void copy(DeviceMemory m, ByteBuffer b) {
        if (b.capacity() > 0) {
            m.copyFromHost(0, b.array(), 0, b.capacity());
        }
    }

    /**
     * One dispatch + combine on every local rank: events 0, 2 and 4 before the dispatch, between the calls and after
     * the combine; with {@code split}, events 1 and 3 between the halves as well.
     */
    private void queueStep(CudaEvent[][] ev, int[] tokens, boolean split) {
        MoeLowLatencyDispatch[] d = new MoeLowLatencyDispatch[n];
        for (int r : locals) {
            MoeRank m = buffer.rank(r);
            ev[r][0].record(m.stream());
            d[r] = m.lowLatencyDispatch(x(r, tokens[r]), topkIdx(r, tokens[r]), split);
            if (split) {
                ev[r][1].record(m.stream());
            }
        }
        for (int r : locals) {
            if (split) {
                d[r].receive();
            }
            ev[r][2].record(buffer.rank(r).stream());
        }
        for (int r : locals) {
            MoeLowLatencyCombine c = buffer.rank(r).lowLatencyCombine(y(r, d[r]), topkIdx(r, tokens[r]),
                    topkWeights(r, tokens[r]), d[r], split);
            if (split) {
                ev[r][3].record(buffer.rank(r).stream());
                c.receive();
            }
            ev[r][4].record(buffer.rank(r).stream());
        }
    }

    private DeviceTensor x(int r, int tokens) {
        return DeviceTensor.of(inputs[r][X], ElementType.BF16, tokens, s.config().hidden());
    }

    private DeviceTensor topkIdx(int r, int tokens) {
        return DeviceTensor.of(inputs[r][TOPK], ElementType.INT64, tokens, s.config().topK());
    }

    private DeviceTensor topkWeights(int r, int tokens) {
        return DeviceTensor.of(inputs[r][WEIGHTS], ElementType.FP32, tokens, s.config().topK());
    }

    /** Rank r's expert outputs as its combine of {@code d} takes them: d's combine input, or the rig's tensor. */
    private DeviceTensor y(int r, MoeLowLatencyDispatch d) {
        return combineFromHeap ? d.combineInput() : DeviceTensor.of(inputs[r][Y], ElementType.BF16,
                s.numLocalExperts(), s.slotsPerExpert(), s.config().hidden());
    }

    @Override
    public void close() {
        for (DeviceMemory[] group : inputs) {
            for (DeviceMemory m : group == null ? new DeviceMemory[0] : group) {
                if (m != null) {
                    m.close();
                }
            }
        }
    }
}
