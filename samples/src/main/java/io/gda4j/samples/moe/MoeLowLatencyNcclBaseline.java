package io.gda4j.samples.moe;

import io.gda4j.moe.MoeBuffer;
import io.gda4j.moe.check.MoeRouting;
import io.gda4j.moe.ll.LowLatencyPart;
import io.gda4j.moe.ll.LowLatencySizing;
import io.gda4j.samples.nccl.AllToAllV;

import java.util.Random;

/**
 * NCCL's all-to-all-v of the same routing as a low-latency dispatch and combine, the baseline
 * {@code gda4j moe --mode low-latency} compares with: rank s sends rank d one row per (token, distinct expert on d)
 * of its top-k (dispatch: payload plus FP8 scales, the bytes the low-latency dispatch moves), and d sends each back
 * as a BF16 row (combine). Buffers are packed by peer beforehand; packing, the FP8 cast and the weighted sum are not
 * timed, only the exchange. Needs libnccl.so.2 and one GPU per rank ({@link MoeNcclBaseline#unavailableReason}),
 * every rank in this process or one per process.
 */
public final class MoeLowLatencyNcclBaseline implements AutoCloseable {
    private final LowLatencySizing s;
    private final NcclExchangeRig rig;

    /**
     * Communicators over the buffer's world (one GPU per rank: every rank in this process, or one rank per process)
     * and buffers for its config. In a world of several processes every process constructs it at the same point.
     */
    public MoeLowLatencyNcclBaseline(MoeBuffer buffer) {
        this.s = buffer.lowLatency().sizing();
        int n = s.worldSize();
        LowLatencyPart c = s.config();
        // A rank sends or receives at most maxTokensPerRank rows per expert it sends to or holds.
        long rows = (long) c.maxTokensPerRank() * Math.max(c.topK(), s.numLocalExperts()) * n;
        this.rig = new NcclExchangeRig(buffer.world(),
                Math.max(16, rows * Math.max(dispatchRowBytes(s), 2L * c.hidden())));
    }

    /** Bytes of a dispatched row: the payload and the FP8 scales. */
    static long dispatchRowBytes(LowLatencySizing s) {
        return s.payloadBytes() + 4L * s.scalesPerRow();
    }

    /** Rows rank s sends rank d: one per (token, distinct expert of its top-k held by d). */
    static long[][] dispatchRows(int[][] topk, int[] tokens, int topK, int numExperts, int worldSize) {
        int local = numExperts / worldSize;
        long[][] rows = new long[worldSize][worldSize];
        for (int src = 0; src < worldSize; src++) {
            for (int t = 0; t < tokens[src]; t++) {
                for (int k = 0; k < topK; k++) {
                    int e = topk[src][t * topK + k];
                    boolean repeat = false;
                    for (int j = 0; j < k && !repeat; j++) {
                        repeat = topk[src][t * topK + j] == e;
                    }
                    if (e >= 0 && !repeat) {
                        rows[src][e / local]++;
                    }
                }
            }
        }
        return rows;
    }

    /** The dispatch exchange of a routing. */
    public static AllToAllV dispatchPlan(LowLatencySizing s, int[][] topk, int[] tokens) {
        return plans(s, topk, tokens).dispatch();
    }

    /** The combine exchange of a routing: every dispatched row back to its source, in BF16. */
    public static AllToAllV combinePlan(LowLatencySizing s, int[][] topk, int[] tokens) {
        return plans(s, topk, tokens).combine();
    }

    private static NcclPlans plans(LowLatencySizing s, int[][] topk, int[] tokens) {
        LowLatencyPart c = s.config();
        return NcclPlans.of(dispatchRows(topk, tokens, c.topK(), c.numExperts(), s.worldSize()), dispatchRowBytes(s),
                2L * c.hidden());
    }

    /** Event-timed exchanges, per iteration the slowest rank's time (ms) over every process. */
    public MoeNcclBaseline.Timing time(MoeRouting.Kind kind, long seed, int[] tokens, int warmup,
                                       int iterations) {
        LowLatencyPart c = s.config();
        int n = s.worldSize();
        Random rnd = new Random(seed);
        int[][] topk = NcclPlans.topkPerRank(n,
                r -> MoeRouting.topk(kind, tokens[r], c.topK(), c.numExperts(), n, rnd));
        return rig.time(plans(s, topk, tokens), warmup, iterations);
    }

    @Override
    public void close() {
        rig.close();
    }
}
