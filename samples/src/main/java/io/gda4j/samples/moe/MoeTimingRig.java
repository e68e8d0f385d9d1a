package io.gda4j.samples.moe;

import io.gda4j.cuda.DeviceMemory;
import io.gda4j.moe.MoeBuffer;
import io.gda4j.moe.MoeDispatchResult;
import io.gda4j.moe.MoeHandle;
import io.gda4j.moe.MoeRank;
import io.gda4j.moe.check.MoeRouting;
import io.gda4j.moe.ht.HighThroughputPart;
import io.gda4j.moe.ht.HighThroughputSizing;
import io.gda4j.moe.tensor.DeviceTensor;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.samples.nccl.AllToAllV;
import io.gda4j.world.Rank;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Random;

/**
 * Times high-throughput dispatch and combine on every rank this process drives, for {@code gda4j moe}: event-timed
 * calls behind a {@link LaunchGate} ({@link GatedSteps}), and the bytes each call moved. Outputs are not checked (the library's
 * MoeReferenceCheck does that, for {@code --check}), so the inputs hold only a routing: the payload, scales and
 * weights are whatever the memory held, which changes no time. Input memory is allocated here, before any kernel runs.
 */
public final class MoeTimingRig implements AutoCloseable {
    /** Where each input lies in a rank's row of {@link #inputs}. */
    private static final int X = 0, SCALES = 1, TOPK = 2, WEIGHTS = 3, Y = 4;

    private final MoeBuffer buffer;
    private final HighThroughputSizing s;
    /** The ranks this process drives: all of them in one JVM, its own in a multi-process world. */
    private final int[] locals;
    /** Per rank: x, FP8 scales, top-k, weights; and the expert outputs of a pushing combine (null when it pulls). */
    private final DeviceMemory[][] inputs;
    /** Expert outputs come from each rank's {@link MoeRank#combineInput()} and combines pull them from there. */
    private final boolean pull;

    /**
     * {@code combineFromHeap}: where the world allows it (every pair p2p or self), the combines pull the expert
     * outputs from each rank's {@link MoeRank#combineInput()}; elsewhere they are pushed from a tensor of the rig's.
     */
    public MoeTimingRig(MoeBuffer buffer, boolean combineFromHeap) {
        this.buffer = buffer;
        this.s = buffer.sizing();
        this.pull = combineFromHeap && s.direct();
        List<Rank> ranks = buffer.world().localRanks();
        this.locals = ranks.stream().mapToInt(Rank::rank).toArray();
        HighThroughputPart c = s.config();
        long t = c.maxTokensPerRank();
        long[] bytes = new long[Y + 1];
        bytes[X] = t * s.payloadBytes();
        bytes[SCALES] = t * 4L * s.scalesPerRow();
        bytes[TOPK] = t * 8L * c.topK();
        bytes[WEIGHTS] = t * 4L * c.topK();
        bytes[Y] = (long) s.maxRecvTokens() * s.combineRowBytes();
        inputs = new DeviceMemory[s.worldSize()][];
        try {
            for (Rank r : ranks) {
                DeviceMemory[] m = new DeviceMemory[Y + 1];
                inputs[r.rank()] = m;
                // A pulling combine reads the rank's combine input in the heap: no y of the rig's.
                for (int k = X; k <= (pull ? WEIGHTS : Y); k++) {
                    m[k] = r.context().allocate(Math.max(16, bytes[k]));
                }
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /**
     * Event-timed dispatch and combine of one routing: per iteration the slowest rank's time (ms), and per rank the
     * bytes the calls moved. {@code recvBytesPerRank}: what a rank received in dispatch (rows x (payload + FP8
     * scales)), its own rows included, as DeepEP counts; {@code combineBytesPerRank}: the BF16 rows it sent back.
     * {@code dispatchLinkBytesPerRank} and {@code combineLinkBytesPerRank}: the bytes a rank sent to ranks on another
     * GPU (its own rows and rows for a rank on its GPU left out), from the routing: what crossed a link between GPUs.
     */
    public record Timing(double[] dispatchMillis, double[] combineMillis, long[] recvBytesPerRank,
                         long[] combineBytesPerRank, long[] dispatchLinkBytesPerRank, long[] combineLinkBytesPerRank) {
    }

    /** Thread blocks each dispatch and each combine runs per rank, one per SM: two per channel. */
    public int blocksPerRank() {
        return MoeRank.blocksPerRank(buffer.config());
    }

    /**
     * Uploads routing {@code kind}, runs the layouts, then {@code warmup + iterations} dispatch + combine pairs on
     * every rank, each timed with events on each rank's stream (from its dispatch's start to its end; with a
     * communication stream, from the rank's stream to its wait for the call, so the fork and the join are in the
     * time). Each iteration is queued on every local rank behind a {@link LaunchGate} and released at once (in a world
     * of several processes, at the gate's start line across them), so the times leave out the host's launches, which
     * one process makes rank after rank.
     */
    public Timing time(MoeRouting.Kind kind, long seed, int[] tokens, int warmup, int iterations) {
        HighThroughputPart c = s.config();
        int n = s.worldSize();
        Random rnd = new Random(seed);
        MoeHandle[] handles = new MoeHandle[n];
        DeviceTensor[][] in = new DeviceTensor[n][];
        int[][] routing = new int[n][];
        for (int r = 0; r < n; r++) {
            // Every process draws every rank's routing (the same random sequence everywhere) and keeps its own.
            routing[r] = MoeRouting.topk(kind, tokens[r], c.topK(), c.numExperts(), n, rnd);
            if (inputs[r] == null) {
                continue;
            }
            in[r] = tensors(r, tokens[r], routing[r]);
            handles[r] = buffer.rank(r).layout(in[r][TOPK]);
        }
        double[] received = new double[n];
        MoeDispatchResult[] d = new MoeDispatchResult[n];
        double[][] t;
        // Events 0, 1 and 2 before the dispatch, between the calls and after the combine, on each rank's stream.
        try (GatedSteps steps = new GatedSteps(buffer.world(), 3)) {
            t = steps.time(warmup, iterations, new int[][] {{0, 1}, {1, 2}}, buffer::checkErrors, events -> {
                for (int r : locals) {
                    MoeRank m = buffer.rank(r);
                    events[r][0].record(m.stream());
                    d[r] = m.dispatch(in[r][X], in[r][SCALES], in[r][TOPK], in[r][WEIGHTS], handles[r]);
                    m.computeStreamWaitForLastCall();
                    events[r][1].record(m.stream());
                }
                for (int r : locals) {
                    MoeRank m = buffer.rank(r);
                    m.combine(in[r][Y], d[r]);
                    m.computeStreamWaitForLastCall();
                    events[r][2].record(m.stream());
                }
            }, i -> {
                for (int r : locals) {
                    received[r] = d[r].numRecvTokens();
                }
            });
        }
        double[] dispatch = t[0];
        double[] combine = t[1];
        // Each process knows its own ranks' counts, 0 for the others: the largest per rank is the one measured.
        double[] recvTokens = GatedSteps.slowestOfEveryProcess(buffer.world(), received);
        long[] recv = new long[n];
        long[] back = new long[n];
        for (int r = 0; r < n; r++) {
            recv[r] = (long) recvTokens[r] * MoeNcclBaseline.dispatchRowBytes(s);
            back[r] = (long) recvTokens[r] * s.combineRowBytes();
        }
        int[] gpus = RankGpus.of(buffer.world());
        return new Timing(dispatch, combine, recv, back,
                linkBytes(MoeNcclBaseline.dispatchPlan(s, routing, tokens), gpus),
                linkBytes(MoeNcclBaseline.combinePlan(s, routing, tokens), gpus));
    }

    /**
     * Uploads rank r's routing and clears its pushed expert outputs; returns its call's tensors of {@code tokens}
     * rows: x, scales (null without FP8), top-k, weights, and y of maxRecvTokens rows (its combine input when pulled).
     */
    private DeviceTensor[] tensors(int r, int tokens, int[] topkIdx) {
        HighThroughputPart c = s.config();
        DeviceMemory[] m = inputs[r];
        ByteBuffer idx = ByteBuffer.allocate(8 * topkIdx.length).order(ByteOrder.LITTLE_ENDIAN);
        for (int e : topkIdx) {
            idx.putLong(e);
        }
        m[TOPK].copyFromHost(0, idx.array(), 0, idx.capacity());
        DeviceTensor[] t = new DeviceTensor[Y + 1];
        t[X] = DeviceTensor.of(m[X], c.dtype(), tokens, c.hidden());
        t[SCALES] = s.scalesPerRow() == 0 ? null : DeviceTensor.of(m[SCALES], ElementType.FP32, tokens, s.scalesPerRow());
        t[TOPK] = DeviceTensor.of(m[TOPK], ElementType.INT64, tokens, c.topK());
        t[WEIGHTS] = DeviceTensor.of(m[WEIGHTS], ElementType.FP32, tokens, c.topK());
        if (pull) {
            t[Y] = buffer.rank(r).combineInput().reshape(s.maxRecvTokens(), c.hidden());
        } else {
            m[Y].fill((byte) 0);
            t[Y] = DeviceTensor.of(m[Y], ElementType.BF16, s.maxRecvTokens(), c.hidden());
        }
        return t;
    }

    /** Per rank the bytes {@code plan} sends to ranks on another GPU ({@code gpus}: {@link RankGpus#of}). */
    static long[] linkBytes(AllToAllV plan, int[] gpus) {
        long[] bytes = new long[plan.size()];
        for (int r = 0; r < bytes.length; r++) {
            bytes[r] = plan.sendTotalOutside(r, gpus);
        }
        return bytes;
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
