package io.gda4j.samples.moe;

import io.gda4j.cuda.Cuda;
import io.gda4j.moe.MoeBuffer;
import io.gda4j.moe.MoeConfig;
import io.gda4j.moe.MoeGraphReplay;
import io.gda4j.moe.check.MoeReferenceCheck;
import io.gda4j.moe.check.MoeRouting;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.transport.Transport;
import io.gda4j.world.GpuWorlds;
import io.gda4j.world.LocalWorld;
import io.gda4j.world.WorldConfig;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The timing rigs of {@code gda4j moe} on the GPU, where the library's tests left them when the rigs moved here: the
 * high-throughput timings on a communication stream after a captured pair replayed (host's
 * MoeCommunicationStreamGpuTest checks the replays) and over the host proxy (proxy's MoeProxyGpuTest checks the
 * calls), and the low-latency timings with the expert outputs in the heap and in the rig's tensors. Ranks share GPU 0.
 */
@Tag("gpu")
@Timeout(300)
class MoeTimingRigGpuTest {
    private static MoeConfig.Builder config(int hidden, ElementType dtype, int topK) {
        return MoeConfig.builder().hidden(hidden).dtype(dtype).maxTokensPerRank(64).numExperts(32).topK(topK)
                .numChannels(3).chunkTokens(4).ringTokens(16).combineWarps(4);
    }

    private static LocalWorld world(int ranks, String transport, long heapBytes, Duration timeout) {
        GpuWorlds.assumeGpu();
        return LocalWorld.create(WorldConfig.builder().gpus(GpuWorlds.gpus(ranks, true)).heapSizeBytes(heapBytes)
                .waitTimeout(timeout).transport(transport).build());
    }

    private static void assertTimed(double[]... millis) {
        for (double[] m : millis) {
            assertTrue(Arrays.stream(m).allMatch(ms -> ms > 0), Arrays.toString(m));
        }
    }

    /** The calls on each rank's communication stream, timed after a captured pair was replayed and an eager call. */
    @Test
    @Timeout(600)
    void theTimingsWorkOnTheCommunicationStreamAfterACapturedPair() {
        try (LocalWorld w = world(2, "p2p", 256L << 20, Duration.ofSeconds(20));
             MoeBuffer moe = MoeBuffer.create(w, config(2048, ElementType.FP8_E4M3, 4).communicationStream(true)
                     .build());
             MoeReferenceCheck check = new MoeReferenceCheck(moe)) {
            MoeGraphReplay.runCaptured(check, MoeRouting.Kind.SKEWED, 11, new int[] {64, 23}, 5);
            check.run(MoeRouting.Kind.UNIFORM, 12, new int[] {40, 64});
            try (MoeTimingRig rig = new MoeTimingRig(moe, false)) {
                MoeTimingRig.Timing t = rig.time(MoeRouting.Kind.UNIFORM, 7, new int[] {64, 64}, 1, 3);
                assertTimed(t.dispatchMillis(), t.combineMillis());
            }
        }
    }

    /**
     * Over the host proxy, as MoeProxyGpuTest's cases. 4 ranks on one GPU need CUDA_DEVICE_MAX_CONNECTIONS=32, or the
     * buffer is refused (MoeProxyGpuTest checks the refusal); the timing is then skipped with the buffer's reason.
     */
    @ParameterizedTest(name = "proxy {0} {1} ranks top-{2}")
    @CsvSource({"BF16, 2, 8", "FP8_E4M3, 2, 3", "BF16, 4, 1", "FP8_E4M3, 4, 8"})
    void theTimingsWorkOverTheProxy(ElementType dtype, int ranks, int topK) {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
        assumeTrue(Cuda.deviceCount() > 0, "no CUDA device visible");
        try (LocalWorld w = LocalWorld.create(WorldConfig.builder().gpus(Collections.nCopies(ranks, 0))
                .heapSizeBytes(128L << 20).waitTimeout(Duration.ofSeconds(30)).transport(Transport.PROXY.label()).build())) {
            assertEquals(Transport.PROXY, w.transport(0, 1));
            MoeBuffer moe;
            try {
                moe = MoeBuffer.create(w, config(4096, dtype, topK).build());
            } catch (IllegalArgumentException refused) {
                assumeTrue(false, refused.getMessage());
                return;
            }
            try (moe; MoeTimingRig rig = new MoeTimingRig(moe, false)) {
                MoeTimingRig.Timing t = rig.time(MoeRouting.Kind.UNIFORM, 3,
                        MoeRouting.tokenCounts(ranks, 64, new Random(6)), 1, 3);
                assertTimed(t.dispatchMillis(), t.combineMillis());
            }
        }
    }

    /** Low-latency calls and their halves, with the expert outputs in each call's combine input and in the rig's. */
    @ParameterizedTest(name = "combine from the heap {0}")
    @ValueSource(booleans = {false, true})
    void theLowLatencyTimingsWork(boolean fromHeap) {
        MoeConfig c = MoeConfig.lowLatencyBuilder().hidden(2048).lowLatency(32, ElementType.FP8_E4M3).numExperts(16)
                .topK(4).build();
        try (LocalWorld w = world(2, "p2p", c.lowLatencySizing(2).heapBytes() + (64L << 20), Duration.ofSeconds(20));
             MoeBuffer ll = MoeBuffer.create(w, c);
             MoeLowLatencyTimingRig rig = new MoeLowLatencyTimingRig(ll, fromHeap)) {
            assertTrue(rig.waitingBlocksPerRank() >= 1);
            MoeLowLatencyTimingRig.Timing t = rig.time(MoeRouting.Kind.UNIFORM, 7, new int[] {32, 32}, 1, 3);
            assertTimed(t.dispatchMillis(), t.combineMillis(), t.dispatchSendMillis(), t.dispatchReceiveMillis(),
                    t.combineSendMillis(), t.combineReceiveMillis());
        }
    }
}
