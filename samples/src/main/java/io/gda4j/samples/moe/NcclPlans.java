package io.gda4j.samples.moe;

import io.gda4j.samples.nccl.AllToAllV;

import java.util.function.IntFunction;

/**
 * NCCL's two exchanges of one routing, as both baselines plan them: the dispatch moves {@code rows[s][d]} rows from
 * rank s to rank d, and the combine sends every one of those rows back to its source. The baselines differ only in
 * which rows a token sends and in the rows' sizes, so they give those and this makes the plans.
 */
record NcclPlans(AllToAllV dispatch, AllToAllV combine) {
    /** Dispatched rows of {@code dispatchRowBytes}, each sent back as a row of {@code combineRowBytes}. */
    static NcclPlans of(long[][] rows, long dispatchRowBytes, long combineRowBytes) {
        return new NcclPlans(AllToAllV.ofRows(rows, dispatchRowBytes),
                AllToAllV.ofRows(AllToAllV.transpose(rows), combineRowBytes));
    }

    /**
     * Every rank's top-k, {@code draw} giving rank r's. It is called in rank order: one generator draws every rank's
     * routing, so each process draws the same one.
     */
    static int[][] topkPerRank(int worldSize, IntFunction<int[]> draw) {
        int[][] topk = new int[worldSize][];
        for (int r = 0; r < worldSize; r++) {
            topk[r] = draw.apply(r);
        }
        return topk;
    }
}
