package io.gda4j.samples.moe;

import io.gda4j.moe.MoeBuffer;
import io.gda4j.moe.check.MoeRouting;
import io.gda4j.moe.ht.HighThroughputPart;
import io.gda4j.moe.ht.HighThroughputSizing;
import io.gda4j.samples.nccl.AllToAllV;
import io.gda4j.samples.nccl.LibNccl;
import io.gda4j.samples.nccl.NcclComms;
import io.gda4j.world.Rank;
import io.gda4j.world.World;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;

/**
 * NCCL's all-to-all-v of the same routing, the baseline {@code gda4j moe} compares dispatch and combine with: rank r
 * sends rank p the rows of its tokens that have an expert on p (dispatch: payload plus FP8 scales per row, the bytes
 * DeepEP's bandwidth counts), and p sends them back as BF16 rows (combine), each rank's own rows included. The buffers
 * are packed by peer beforehand; the packing and the experts' reduction are not timed, only the exchange.
 *
 * <p>Needs libnccl.so.2 and one GPU per rank ({@link #unavailableReason(World)} says which is missing), with every
 * rank in this process or one rank per process (under a launcher: one communicator per process, the NCCL unique id
 * carried by the world's all-gather). Buffers are allocated for the config's largest exchange up front, before any
 * kernel runs.
 */
public final class MoeNcclBaseline implements AutoCloseable {
    private final HighThroughputSizing s;
    private final NcclExchangeRig rig;

    /** Event-timed exchanges, per iteration the slowest rank's time. */
    public record Timing(double[] dispatchMillis, double[] combineMillis) {
    }

    /**
     * Why NCCL cannot run in {@code world}: "NCCL not found ...", "NCCL needs one GPU per rank ...", or null. In a
     * world of several processes every process must call it at the same point: each says what it lacks over the
     * world's all-gather, and all return the same answer (the first process's reason).
     */
    public static String unavailableReason(World world) {
        List<Rank> local = world.localRanks();
        if (local.size() == world.size()) {
            return NcclComms.unavailableReason(NcclExchangeRig.devices(local));
        }
        String mine = null;
        int[] gpus = RankGpus.of(world);
        for (int r = 0; r < gpus.length && mine == null; r++) {
            if (gpus[r] != r) {
                mine = "NCCL needs one GPU per rank: ranks " + gpus[r] + " and " + r + " share a GPU";
            }
        }
        if (mine == null && local.size() != 1) {
            mine = "the NCCL baseline runs one rank per process under a launcher; this process drives " + local.size();
        }
        if (mine == null && !LibNccl.isAvailable()) {
            mine = LibNccl.unavailableReason();
        }
        return agreedReason(world.allGather(mine == null ? new byte[0] : mine.getBytes(StandardCharsets.UTF_8)));
    }

    /** The first process's reason in an all-gather of them (empty: none), naming the process; null when none has one. */
    static String agreedReason(byte[][] gathered) {
        for (int p = 0; p < gathered.length; p++) {
            if (gathered[p].length > 0) {
                String why = new String(gathered[p], StandardCharsets.UTF_8);
                return gathered.length == 1 ? why : why + " (said by process " + p + " of " + gathered.length + ")";
            }
        }
        return null;
    }

    /**
     * Communicators over the buffer's world (one GPU per rank: every rank in this process, or one rank per process)
     * and buffers for its config. In a world of several processes every process constructs it at the same point.
     */
    public MoeNcclBaseline(MoeBuffer buffer) {
        this.s = buffer.sizing();
        // Each direction moves at most every token to every rank: maxRecvTokens rows of the wider row.
        long bytes = Math.max(16, (long) s.maxRecvTokens() * Math.max(dispatchRowBytes(s), s.combineRowBytes()));
        this.rig = new NcclExchangeRig(buffer.world(), bytes);
    }

    /** Bytes of a dispatched row that DeepEP counts and the baseline moves: the payload and the FP8 scales. */
    static long dispatchRowBytes(HighThroughputSizing s) {
        return s.payloadBytes() + 4L * s.scalesPerRow();
    }

    /**
     * Rows rank s sends rank d in a dispatch: its tokens with at least one expert on d ({@code topk[s]} is rank s's
     * {@code tokens[s] x topK} expert indices, -1 = none).
     */
    static long[][] dispatchRows(int[][] topk, int[] tokens, int topK, int numExperts, int worldSize) {
        int local = numExperts / worldSize;
        long[][] rows = new long[worldSize][worldSize];
        for (int src = 0; src < worldSize; src++) {
            for (int t = 0; t < tokens[src]; t++) {
                boolean[] to = new boolean[worldSize];
                for (int k = 0; k < topK; k++) {
                    int e = topk[src][t * topK + k];
                    if (e >= 0) {
                        to[e / local] = true;
                    }
                }
                for (int d = 0; d < worldSize; d++) {
                    if (to[d]) {
                        rows[src][d]++;
                    }
                }
            }
        }
        return rows;
    }

    /** The dispatch exchange of a routing. */
    public static AllToAllV dispatchPlan(HighThroughputSizing s, int[][] topk, int[] tokens) {
        return plans(s, topk, tokens).dispatch();
    }

    /** The combine exchange of a routing: every dispatched row back to its source, in BF16. */
    public static AllToAllV combinePlan(HighThroughputSizing s, int[][] topk, int[] tokens) {
        return plans(s, topk, tokens).combine();
    }

    private static NcclPlans plans(HighThroughputSizing s, int[][] topk, int[] tokens) {
        HighThroughputPart c = s.config();
        return NcclPlans.of(dispatchRows(topk, tokens, c.topK(), c.numExperts(), s.worldSize()), dispatchRowBytes(s),
                s.combineRowBytes());
    }

    /**
     * Runs {@code warmup + iterations} dispatch + combine exchanges of routing {@code kind} ({@code tokens[r]} on rank
     * r), timed with events on each rank's stream from the exchange's launch to its end; per iteration the slowest
     * rank's time over every process (under a launcher each iteration starts at a {@link LaunchGate}'s start line).
     */
    public Timing time(MoeRouting.Kind kind, long seed, int[] tokens, int warmup, int iterations) {
        HighThroughputPart c = s.config();
        int n = s.worldSize();
        Random rnd = new Random(seed);
        int[][] topk = NcclPlans.topkPerRank(n, r -> MoeRouting.topk(kind, tokens[r], c.topK(), c.numExperts(), n, rnd));
        return rig.time(plans(s, topk, tokens), warmup, iterations);
    }

    /**
     * One exchange of {@code plan} with {@code data[r]} (rank r's packed send buffer) as input; returns each rank's
     * received bytes ({@code plan.recvTotal(r)} of them). For checks, not timing.
     */
    byte[][] exchange(AllToAllV plan, byte[][] data) {
        return rig.exchange(plan, data);
    }

    @Override
    public void close() {
        rig.close();
    }
}
