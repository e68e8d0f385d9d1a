package io.gda4j.moe;

import io.gda4j.nccl.AllToAllV;
import io.gda4j.nccl.NcclComms;
import io.gda4j.world.Rank;
import io.gda4j.world.World;

import java.util.List;

/**
 * NCCL's all-to-all-v of the same routing, the baseline {@code gda4j moe} compares dispatch and combine with: rank r
 * sends rank p the rows of its tokens that have an expert on p (dispatch: payload plus FP8 scales per row, the bytes
 * DeepEP's bandwidth counts), and p sends them back as BF16 rows (combine), each rank's own rows included. The buffers
 * are packed by peer beforehand; the packing and the experts' reduction are not timed, only the exchange.
 *
 * <p>Needs libnccl.so.2 and one GPU per rank ({@link #unavailableReason(World)} says which is missing). Buffers are
 * allocated for the config's largest exchange up front, before any kernel runs.
 */
public final class MoeNcclBaseline implements AutoCloseable {
    private final MoeSizing s;
    private final NcclExchangeRig rig;

    /** Event-timed exchanges, per iteration the slowest rank's time. */
    public record Timing(double[] dispatchMillis, double[] combineMillis) {
    }

    /** Why NCCL cannot run in {@code world}: "NCCL not found ...", "NCCL needs one GPU per rank ...", or null. */
    public static String unavailableReason(World world) {
        if (world.localRanks().size() != world.size()) {
            return "the NCCL baseline drives every rank from one process (run without a launcher for it)";
        }
        return NcclComms.unavailableReason(NcclExchangeRig.devices(world.localRanks()));
    }

    /** Communicators over the buffer's world (all ranks local, one GPU each) and buffers for its config. */
    public MoeNcclBaseline(MoeBuffer buffer) {
        this.s = buffer.sizing();
        List<Rank> ranks = buffer.world().localRanks();
        if (ranks.size() != s.worldSize()) {
            throw new IllegalArgumentException("the NCCL baseline drives every rank: it needs a world whose ranks are all local");
        }
        // Each direction moves at most every token to every rank: maxRecvTokens rows of the wider row.
        long bytes = Math.max(16, (long) s.maxRecvTokens() * Math.max(dispatchRowBytes(s), s.combineRowBytes()));
        this.rig = new NcclExchangeRig(ranks, bytes);
    }

    /** Bytes of a dispatched row that DeepEP counts and the baseline moves: the payload and the FP8 scales. */
    static long dispatchRowBytes(MoeSizing s) {
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
    public static AllToAllV dispatchPlan(MoeSizing s, int[][] topk, int[] tokens) {
        MoeConfig c = s.config();
        return AllToAllV.ofRows(dispatchRows(topk, tokens, c.topK(), c.numExperts(), s.worldSize()), dispatchRowBytes(s));
    }

    /** The combine exchange of a routing: every dispatched row back to its source, in BF16. */
    public static AllToAllV combinePlan(MoeSizing s, int[][] topk, int[] tokens) {
        MoeConfig c = s.config();
        return AllToAllV.ofRows(AllToAllV.transpose(dispatchRows(topk, tokens, c.topK(), c.numExperts(), s.worldSize())),
                s.combineRowBytes());
    }

    /**
     * Runs {@code warmup + iterations} dispatch + combine exchanges of routing {@code kind} ({@code tokens[r]} on rank
     * r), timed with events on each rank's stream from the exchange's launch to its end.
     */
    public Timing time(MoeRouting.Kind kind, long seed, int[] tokens, int warmup, int iterations) {
        MoeConfig c = s.config();
        int n = s.worldSize();
        java.util.Random rnd = new java.util.Random(seed);
        int[][] topk = new int[n][];
        for (int r = 0; r < n; r++) {
            topk[r] = MoeRouting.topk(kind, tokens[r], c.topK(), c.numExperts(), n, rnd);
        }
        return rig.time(dispatchPlan(s, topk, tokens), combinePlan(s, topk, tokens), warmup, iterations);
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
