package io.gda4j.samples.moe;

import io.gda4j.cuda.Cuda;
import io.gda4j.moe.MoeBuffer;
import io.gda4j.moe.MoeConfig;
import io.gda4j.moe.check.MoeRouting;
import io.gda4j.moe.ht.HighThroughputSizing;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.samples.nccl.AllToAllV;
import io.gda4j.samples.nccl.LibNccl;
import io.gda4j.world.GpuWorlds;
import io.gda4j.world.LocalWorld;
import io.gda4j.world.WorldConfig;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The NCCL all-to-all-v baseline on GPUs: ranks sharing a GPU are reported, not run; with one GPU per rank (2 or
 * more GPUs and libnccl.so.2, e.g. GDA4J_NCCL_LIBRARY) every byte lands where the plan says, and the timing runs.
 */
@Tag("gpu")
@Timeout(300)
class MoeNcclGpuTest {
    private static MoeConfig config() {
        return MoeConfig.builder().hidden(2048).dtype(ElementType.FP8_E4M3).maxTokensPerRank(128).numExperts(32).topK(4)
                .numChannels(4).chunkTokens(8).ringTokens(32).combineWarps(4).build();
    }

    @Test
    void ranksSharingAGpuAreReportedNotRun() {
        GpuWorlds.assumeGpu();
        try (LocalWorld w = LocalWorld.create(WorldConfig.builder().gpus(Collections.nCopies(2, 0))
                .heapSizeBytes(64L << 20).transport("p2p").build())) {
            assertEquals("NCCL needs one GPU per rank: ranks 0 and 1 share GPU 0", MoeNcclBaseline.unavailableReason(w));
        }
    }

    @Test
    void everyByteLandsWhereThePlanSaysAndTheTimingRuns() {
        GpuWorlds.assumeGpu();
        assumeTrue(Cuda.deviceCount() >= 2, "NCCL needs one GPU per rank: this machine has " + Cuda.deviceCount());
        assumeTrue(LibNccl.isAvailable(), LibNccl::unavailableReason);
        int n = Math.min(4, Cuda.deviceCount());
        List<Integer> gpus = new ArrayList<>();
        for (int g = 0; g < n; g++) {
            gpus.add(g);
        }
        exchangeLandsWhereThePlanSaysAndTheTimingRuns(gpus);
    }

    /**
     * NCCL refuses two ranks on one GPU, but a one-rank world runs the real library on any GPU: each exchange is a
     * grouped send and receive to itself, through the same JNA calls and plans the benchmark uses.
     */
    @Test
    void aOneRankWorldExchangesWithItselfThroughTheRealLibrary() {
        GpuWorlds.assumeGpu();
        assumeTrue(LibNccl.isAvailable(), LibNccl::unavailableReason);
        exchangeLandsWhereThePlanSaysAndTheTimingRuns(List.of(0));
    }

    private static void exchangeLandsWhereThePlanSaysAndTheTimingRuns(List<Integer> gpus) {
        int n = gpus.size();
        try (LocalWorld w = LocalWorld.create(WorldConfig.builder().gpus(gpus).heapSizeBytes(256L << 20)
                .waitTimeout(Duration.ofSeconds(30)).build());
             MoeBuffer moe = MoeBuffer.create(w, config());
             MoeNcclBaseline nccl = new MoeNcclBaseline(moe)) {
            HighThroughputSizing s = moe.sizing();
            Random rnd = new Random(11);
            int[] tokens = MoeRouting.tokenCounts(n, 128, rnd);
            int[][] topk = new int[n][];
            for (int r = 0; r < n; r++) {
                topk[r] = MoeRouting.topk(MoeRouting.Kind.SKEWED, tokens[r], 4, 32, n, rnd);
            }
            for (AllToAllV plan : new AllToAllV[] {MoeNcclBaseline.dispatchPlan(s, topk, tokens),
                    MoeNcclBaseline.combinePlan(s, topk, tokens)}) {
                byte[][] data = new byte[n][];
                for (int r = 0; r < n; r++) {
                    data[r] = new byte[Math.toIntExact(plan.sendTotal(r))];
                    rnd.nextBytes(data[r]);
                }
                byte[][] got = nccl.exchange(plan, data);
                for (int r = 0; r < n; r++) {
                    for (int p = 0; p < n; p++) {
                        int len = Math.toIntExact(plan.recvBytes()[r][p]);
                        byte[] want = new byte[len];
                        System.arraycopy(data[p], Math.toIntExact(plan.sendOffsets()[p][r]), want, 0, len);
                        byte[] seen = new byte[len];
                        System.arraycopy(got[r], Math.toIntExact(plan.recvOffsets()[r][p]), seen, 0, len);
                        assertArrayEquals(want, seen, "rank " + r + " from rank " + p);
                    }
                }
            }
            MoeNcclBaseline.Timing t = nccl.time(MoeRouting.Kind.UNIFORM, 3, tokens, 1, 3);
            for (int i = 0; i < 3; i++) {
                assertTrue(t.dispatchMillis()[i] > 0 && t.combineMillis()[i] > 0, "iteration " + i + " was timed");
            }
        }
    }
}
