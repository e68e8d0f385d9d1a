package io.gda4j.world;

import io.gda4j.cuda.Cuda;

import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Worlds for GPU tests: two ranks on GPUs 0 and 1 where there are two, else both on GPU 0 (still P2P code). */
final class GpuWorlds {
    private GpuWorlds() {
    }

    static void assumeGpu() {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
        assumeTrue(Cuda.deviceCount() > 0, "no CUDA device visible");
    }

    static LocalWorld twoRanks(long heapBytes, Duration timeout) {
        assumeGpu();
        List<Integer> gpus = Cuda.deviceCount() >= 2 ? List.of(0, 1) : List.of(0, 0);
        return LocalWorld.create(WorldConfig.builder().gpus(gpus).heapSizeBytes(heapBytes).waitTimeout(timeout)
                .transport("p2p").build());
    }
}
