package io.gda4j.moe;

import io.gda4j.cuda.Cuda;
import io.gda4j.moe.check.MoeReferenceCheck;
import io.gda4j.moe.check.MoeRouting;
import io.gda4j.moe.core.WorkQueueBudget;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.transport.Transport;
import io.gda4j.world.LocalWorld;
import io.gda4j.world.WorldConfig;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.Collections;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * MoE dispatch and combine over the host proxy (chunks packed in the staging ring, one trigger per run, the tail
 * signalled after it), against the reference bit for bit; ranks share GPU 0. The p2p and ibgda cases are in the host
 * module's MoeGpuTest.
 *
 * <p>4 ranks on one GPU over the proxy make 20 streams (8 of the ranks, 12 channels): more than the 8 hardware work
 * queues of a context unless CUDA_DEVICE_MAX_CONNECTIONS raises them, and then the MoE kernels can deadlock with the
 * proxy's signals (WorkQueueBudget). Without it these cases check that MoeBuffer refuses with what to set; run them
 * with CUDA_DEVICE_MAX_CONNECTIONS=32 to check the transfers.
 */
@Tag("gpu")
@Timeout(300)
class MoeProxyGpuTest {
    @ParameterizedTest(name = "proxy {0} {1} ranks top-{2}")
    @CsvSource({"BF16, 2, 8", "FP8_E4M3, 2, 3", "BF16, 4, 1", "FP8_E4M3, 4, 8"})
    void proxyMatchesTheReference(ElementType dtype, int ranks, int topK) {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
        assumeTrue(Cuda.deviceCount() > 0, "no CUDA device visible");
        MoeConfig config = MoeConfig.builder().hidden(4096).dtype(dtype).maxTokensPerRank(64).numExperts(32).topK(topK)
                .numChannels(3).chunkTokens(4).ringTokens(16).combineWarps(4).build();
        try (LocalWorld w = LocalWorld.create(WorldConfig.builder().gpus(Collections.nCopies(ranks, 0))
                .heapSizeBytes(128L << 20).waitTimeout(Duration.ofSeconds(30)).transport(Transport.PROXY.label()).build())) {
            assertEquals(Transport.PROXY, w.transport(0, 1));
            String tooFewQueues = MoeBuffer.queueProblem(w);
            if (tooFewQueues != null) {
                assertTrue(ranks > 2 && WorkQueueBudget.connections() < 2 * ranks + ranks * (ranks - 1), tooFewQueues);
                IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                        () -> MoeBuffer.create(w, config).close());
                assertEquals(tooFewQueues, refused.getMessage());
                assertTrue(refused.getMessage().contains("CUDA_DEVICE_MAX_CONNECTIONS=32"), refused.getMessage());
                return;
            }
            try (MoeBuffer moe = MoeBuffer.create(w, config);
                 MoeReferenceCheck check = new MoeReferenceCheck(moe)) {
                Random rnd = new Random(ranks * 10L + topK);
                long first = 0;
                for (MoeRouting.Kind kind : MoeRouting.HIGH_THROUGHPUT) {
                    long h = check.run(kind, 99, MoeRouting.tokenCounts(ranks, 64, new Random(5)));
                    if (kind == MoeRouting.Kind.UNIFORM) {
                        first = h;
                    }
                }
                assertEquals(first, check.run(MoeRouting.Kind.UNIFORM, 99,
                        MoeRouting.tokenCounts(ranks, 64, new Random(5))), "the same call again gives the same bits");
                check.run(MoeRouting.Kind.SKEWED, rnd.nextLong(), MoeRouting.tokenCounts(ranks, 64, rnd));
                // The timing over the proxy: the samples' MoeTimingRigGpuTest (the timing rig lives there).
            }
        }
    }
}
