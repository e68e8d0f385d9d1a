package io.gda4j.samples.moe;

import io.gda4j.moe.MoeConfig;
import io.gda4j.moe.check.MoeLowLatencyReference;
import io.gda4j.moe.check.MoeRouting;
import io.gda4j.moe.ll.LowLatencySizing;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.samples.nccl.AllToAllV;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The low-latency NCCL baseline moves exactly the rows the reference dispatch delivers, and each back. */
class MoeLowLatencyNcclBaselineTest {
    @ParameterizedTest
    @EnumSource(MoeRouting.Kind.class)
    void planRowsAreTheReferencesRows(MoeRouting.Kind kind) {
        int n = 4;
        MoeConfig c = MoeConfig.lowLatencyBuilder().hidden(256).lowLatency(20, ElementType.FP8_E4M3).numExperts(16)
                .topK(4).build();
        LowLatencySizing s = c.lowLatencySizing(n);
        Random rnd = new Random(kind.ordinal());
        int[] tokens = MoeRouting.tokenCounts(n, 20, rnd);
        int[][] topk = new int[n][];
        MoeLowLatencyReference.Input[] in = new MoeLowLatencyReference.Input[n];
        for (int r = 0; r < n; r++) {
            topk[r] = MoeRouting.topk(kind, tokens[r], c.topK(), c.numExperts(), n, rnd);
            in[r] = new MoeLowLatencyReference.Input(tokens[r], MoeRouting.wideRangeRows(tokens[r], c.hidden(), rnd),
                    topk[r]);
        }
        AllToAllV dispatch = MoeLowLatencyNcclBaseline.dispatchPlan(s, topk, tokens);
        AllToAllV combine = MoeLowLatencyNcclBaseline.combinePlan(s, topk, tokens);
        long row = s.payloadBytes() + 4L * s.scalesPerRow();
        for (int r = 0; r < n; r++) {
            MoeLowLatencyReference.Received got = MoeLowLatencyReference.dispatch(s, in, r);
            long rows = 0;
            for (int v : got.count()) {
                rows += v;
            }
            assertEquals(rows * row, dispatch.recvTotal(r), "rank " + r + " receives the reference's rows");
            assertEquals(rows * 2L * c.hidden(), combine.sendTotal(r), "and sends each back in BF16");
            for (int src = 0; src < n; src++) {
                long fromSrc = 0;
                for (int e = 0; e < s.numLocalExperts(); e++) {
                    fromSrc += got.countPerSource()[e * n + src];
                }
                assertEquals(fromSrc * row, dispatch.recvBytes()[r][src], "rank " + r + " from " + src);
            }
        }
    }
}
