package io.gda4j.samples.moe;

import io.gda4j.moe.MoeConfig;
import io.gda4j.moe.ht.HighThroughputSizing;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.samples.nccl.AllToAllV;
import io.gda4j.world.PeerCard;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Objects;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * What crosses between GPUs in a MoE exchange (the link columns of {@code gda4j moe}): a rank's own rows and rows
 * for a rank on its GPU never do; a token goes once to each other rank that holds one of its experts.
 */
class MoeLinkBytesTest {
    /** 4 ranks, 2 experts each (8 experts), top-2; ranks 0 and 1 on one GPU, 2 and 3 on another. */
    private static final int[] TWO_GPUS = {0, 0, 2, 2};

    private static HighThroughputSizing sizing(ElementType dtype) {
        return MoeConfig.builder().hidden(256).dtype(dtype).maxTokensPerRank(8).numExperts(8).topK(2).numChannels(2)
                .chunkTokens(4).ringTokens(8).combineWarps(2).build().sizing(4);
    }

    /**
     * Rank 0: token 0 to experts 0 (itself) and 2 (rank 1, same GPU); token 1 to experts 4 and 5 (both rank 2); token
     * 2 to expert 6 (rank 3) and none. Rank 3: token 0 to experts 0 (rank 0) and 7 (itself). Ranks 1 and 2 send none.
     */
    private static final int[][] TOPK = {{0, 2, 4, 5, 6, -1}, {}, {}, {0, 7}};
    private static final int[] TOKENS = {3, 0, 0, 1};

    @Test
    void ownRowsAndRowsForARankOnTheSameGpuDoNotCross() {
        for (ElementType dtype : new ElementType[] {ElementType.BF16, ElementType.FP8_E4M3}) {
            HighThroughputSizing s = sizing(dtype);
            long row = s.payloadBytes() + 4L * s.scalesPerRow();
            long[] dispatch = MoeTimingRig.linkBytes(MoeNcclBaseline.dispatchPlan(s, TOPK, TOKENS), TWO_GPUS);
            // Rank 0: token 1 once to rank 2 (two experts there, one row), token 2 to rank 3; rank 3: token 0 to rank 0.
            assertArrayEquals(new long[] {2 * row, 0, 0, row}, dispatch, dtype + ": payload + FP8 scales per row");
            long back = 2L * s.config().hidden();
            long[] combine = MoeTimingRig.linkBytes(MoeNcclBaseline.combinePlan(s, TOPK, TOKENS), TWO_GPUS);
            assertArrayEquals(new long[] {back, 0, back, back}, combine, dtype + ": each crossing row returns as BF16");
        }
    }

    @Test
    void onOneGpuNothingCrossesAndOnFourEveryOtherRanksRowDoes() {
        HighThroughputSizing s = sizing(ElementType.BF16);
        long row = s.payloadBytes();
        AllToAllV plan = MoeNcclBaseline.dispatchPlan(s, TOPK, TOKENS);
        assertArrayEquals(new long[4], MoeTimingRig.linkBytes(plan, new int[] {0, 0, 0, 0}));
        assertArrayEquals(new long[] {3 * row, 0, 0, row}, MoeTimingRig.linkBytes(plan, new int[] {0, 1, 2, 3}),
                "one GPU per rank: only the own row stays");
        assertEquals(4 * row, plan.sendTotal(0), "DeepEP's count keeps the own row");
        assertThrows(IllegalArgumentException.class, () -> plan.sendTotalOutside(0, new int[] {0, 1}));
    }

    @Test
    void ranksOnOneGpuShareTheLowestRanksLabel() {
        List<String> byRank = List.of("gpu-b", "gpu-a", "gpu-b", "gpu-c", "gpu-a");
        int[] labels = RankGpus.labels(byRank, Objects::equals);
        assertArrayEquals(new int[] {0, 1, 0, 3, 1}, labels);
        assertEquals(1, RankGpus.firstOnAnotherGpu(labels, 0));
        assertEquals(0, RankGpus.firstOnAnotherGpu(labels, 1));
        assertEquals(-1, RankGpus.firstOnAnotherGpu(new int[] {0, 0}, 0), "every rank on rank 0's GPU");
    }

    /**
     * Processes of one machine that count as two hosts (GDA4J_HOST_NAME) on one GPU still share it: the NCCL columns
     * are skipped for them as for any ranks sharing a GPU (NCCL refuses two ranks on one device).
     */
    @Test
    void processesOnOneGpuShareItWhateverHostTheyCountAs() {
        PeerCard a = new PeerCard(0, 2, 1, 1 << 20, PeerCard.hostIdOf("host-a"), null, "GPU-x", "bus", "host-a");
        PeerCard b = new PeerCard(1, 2, 2, 1 << 20, PeerCard.hostIdOf("host-b"), null, "GPU-x", "bus", "host-b");
        PeerCard c = new PeerCard(1, 2, 2, 1 << 20, PeerCard.hostIdOf("host-b"), null, "GPU-y", "bus", "host-b");
        assertArrayEquals(new int[] {0, 0}, RankGpus.labels(List.of(a, b), PeerCard::sameGpu));
        assertArrayEquals(new int[] {0, 1}, RankGpus.labels(List.of(a, c), PeerCard::sameGpu));
    }
}
