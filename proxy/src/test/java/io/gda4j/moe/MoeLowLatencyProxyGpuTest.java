package io.gda4j.moe;

import io.gda4j.cuda.Cuda;
import io.gda4j.moe.check.MoeLowLatencyReferenceCheck;
import io.gda4j.moe.check.MoeRouting;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.transport.Transport;
import io.gda4j.world.LocalWorld;
import io.gda4j.world.WorldConfig;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.Collections;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Low-latency dispatch and combine over the host proxy, a batched pair (rows cast into messages in the send order;
 * per pair of ranks one put of all the rows, then one PUT_SIGNAL of the count table with the pair's batch word; the
 * combine stages every expert's rows in the source's send order and returns them in one put), against the reference
 * bit for bit; ranks share GPU 0. The routings include pairs with no rows at all (everything to rank 0, one expert).
 * Hidden 7168 gives a token two blocks of the dispatch send (its parts; up to 32 tokens fit in one wave), whose
 * stores the pair's one put must all follow. A proxy pair runs the counted protocol, whatever is asked (the tagged
 * one is the default only where every pair is direct). p2p and ibgda: MoeLowLatencyGpuTest in the host module. As in
 * MoeProxyGpuTest, 4 ranks need
 * CUDA_DEVICE_MAX_CONNECTIONS=32; without it the case checks that the buffer is refused with what to set.
 */
@Tag("gpu")
@Timeout(300)
class MoeLowLatencyProxyGpuTest {
    @ParameterizedTest(name = "proxy {0} {1} ranks top-{2} split {3} hidden {4}")
    @CsvSource({"BF16, 2, 8, false, 2048", "FP8_E4M3, 2, 3, true, 2048", "FP8_E4M3, 4, 8, false, 2048",
                "BF16, 2, 8, true, 7168", "FP8_E4M3, 2, 8, false, 7168"})
    void proxyMatchesTheReference(ElementType type, int ranks, int topK, boolean split, int hidden) {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
        assumeTrue(Cuda.deviceCount() > 0, "no CUDA device visible");
        MoeConfig config = MoeConfig.lowLatencyBuilder().hidden(hidden).numExperts(32).topK(topK).lowLatency(32, type)
                .build();
        try (LocalWorld w = LocalWorld.create(WorldConfig.builder().gpus(Collections.nCopies(ranks, 0))
                .heapSizeBytes(config.lowLatencySizing(ranks).heapBytes() + (64L << 20))
                        .waitTimeout(Duration.ofSeconds(30)).transport(Transport.PROXY.label()).build())) {
            assertEquals(Transport.PROXY, w.transport(0, 1));
            String tooFewQueues = MoeBuffer.queueProblem(w);
            if (tooFewQueues != null) {
                IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                        () -> MoeBuffer.create(w, config).close());
                assertEquals(tooFewQueues, refused.getMessage());
                assertTrue(refused.getMessage().contains("CUDA_DEVICE_MAX_CONNECTIONS"), refused.getMessage());
                return;
            }
            try (MoeBuffer ll = MoeBuffer.create(w, config);
                 // Where the expert outputs are written: hidden 7168 passes each call's combine input as y (the
                 // batched combine then stages its rows from there, as from a tensor of the user's own).
                 MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll, hidden == 7168)) {
                assertFalse(ll.lowLatency().sizing().tagged(), "a proxy pair runs the counted protocol, by default too");
                Random rnd = new Random(ranks * 10L + topK);
                for (MoeRouting.Kind kind : MoeRouting.Kind.values()) {
                    check.run(kind, rnd.nextLong(), MoeRouting.tokenCounts(ranks, 32, rnd), split);
                }
            }
        }
    }
    /**
     * More tokens than one wave of blocks (300 of hidden 128 on ranks sharing GPU 0) take the route kernel before the
     * dispatch, fewer route in the dispatch's blocks: the batched pair's count table is filled from either (the send
     * rows the route kernel left, or those each block found), on both buffers, split and whole.
     */
    @Test
    void batchedPairsOfCallsRoutedByTheRouteKernelAndByTheDispatch() {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
        assumeTrue(Cuda.deviceCount() > 0, "no CUDA device visible");
        MoeConfig config = MoeConfig.lowLatencyBuilder().hidden(128).numExperts(64).topK(8)
                .lowLatency(300, ElementType.FP8_E4M3).build();
        try (LocalWorld w = LocalWorld.create(WorldConfig.builder().gpus(Collections.nCopies(2, 0))
                .heapSizeBytes(config.lowLatencySizing(2).heapBytes() + (64L << 20)).waitTimeout(Duration.ofSeconds(30))
                .transport(Transport.PROXY.label()).build());
             MoeBuffer ll = MoeBuffer.create(w, config);
             MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll)) {
            int[] tokens = {5, 300, 7, 300, 1, 300};
            MoeRouting.Kind[] kinds = MoeRouting.Kind.values();
            for (int i = 0; i < tokens.length; i++) {
                check.run(kinds[i % kinds.length], 60 + i, new int[] {tokens[i], Math.max(1, tokens[i] - 2)}, i % 3 == 2);
            }
        }
    }
}
