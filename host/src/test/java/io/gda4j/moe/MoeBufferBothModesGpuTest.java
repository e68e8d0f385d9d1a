package io.gda4j.moe;

import io.gda4j.moe.check.MoeLowLatencyReferenceCheck;
import io.gda4j.moe.check.MoeReferenceCheck;
import io.gda4j.moe.check.MoeRouting;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.world.GpuWorlds;
import io.gda4j.world.LocalWorld;
import io.gda4j.world.WorldConfig;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One MoeBuffer with both modes (DeepEP's one Buffer): high-throughput and low-latency calls alternate on it, each
 * bit for bit against its reference, over p2p on two GPUs (or ranks sharing GPU 0 where there is one); a buffer
 * without a low-latency part says how to get one.
 */
@Tag("gpu")
@Timeout(300)
class MoeBufferBothModesGpuTest {
    @Test
    void highThroughputAndLowLatencyCallsAlternateOnOneBuffer() {
        MoeConfig config = MoeConfig.builder().hidden(2048).maxTokensPerRank(256).numExperts(32).topK(4)
                .lowLatency(32, ElementType.FP8_E4M3).build();
        try (LocalWorld w = world(config.heapBytes(2));
             MoeBuffer moe = MoeBuffer.create(w, config);
             MoeReferenceCheck highThroughput = new MoeReferenceCheck(moe);
             MoeLowLatencyReferenceCheck lowLatency = new MoeLowLatencyReferenceCheck(moe)) {
            assertSame(config.lowLatencyPart(), moe.lowLatency().config());
            for (int i = 0; i < 3; i++) {
                highThroughput.run(MoeRouting.Kind.values()[i], 10 + i, new int[] {200 + i, 150});
                lowLatency.run(MoeRouting.Kind.values()[i], 20 + i, new int[] {32, 17 + i}, i == 1);
            }
        }
    }

    @Test
    void aBufferWithoutALowLatencyPartSaysHowToGetOne() {
        MoeConfig config = MoeConfig.builder().hidden(2048).maxTokensPerRank(64).numExperts(32).topK(4).build();
        try (LocalWorld w = world(config.heapBytes(2));
             MoeBuffer moe = MoeBuffer.create(w, config)) {
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> moe.rank(0).lowLatencyDispatch(null, null, false));
            assertTrue(e.getMessage().contains("lowLatency(maxTokensPerRank, dispatchType)"), e.getMessage());
            assertThrows(IllegalStateException.class, moe::lowLatency);
        }
    }

    private static LocalWorld world(long heapBytes) {
        GpuWorlds.assumeGpu();
        return LocalWorld.create(WorldConfig.builder().gpus(GpuWorlds.gpus()).heapSizeBytes(heapBytes + (64L << 20))
                .waitTimeout(Duration.ofSeconds(20)).transport("p2p").build());
    }
}
