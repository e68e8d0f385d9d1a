package io.gda4j.world;

import io.gda4j.cuda.Cuda;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Worlds for GPU tests: two ranks on GPUs 0 and 1 where there are two, else both on GPU 0 (still P2P code). The
 * ranks' GPUs can be chosen like any world's ({@code GDA4J_GPUS} / {@code -Dgda4j.gpus}), e.g. {@code 0,0,0,0} runs
 * the suite with four ranks on one GPU; the tests use ranks 0 and 1 and the others stay idle beside them.
 */
public final class GpuWorlds {
    private GpuWorlds() {
    }

    public static void assumeGpu() {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
        assumeTrue(Cuda.deviceCount() > 0, "no CUDA device visible");
    }

    /** The configured GPU list when one is set (at least two ranks), else GPUs 0 and 1, or 0 twice. */
    public static List<Integer> gpus() {
        List<Integer> configured = WorldConfig.resolve().gpus();
        if (configured.size() >= 2) {
            return configured;
        }
        return gpus(2, false);
    }

    /** {@code ranks} ranks spread over the visible GPUs round-robin, or all on GPU 0 when {@code shareOneGpu}. */
    public static List<Integer> gpus(int ranks, boolean shareOneGpu) {
        List<Integer> gpus = new ArrayList<>(Collections.nCopies(ranks, 0));
        if (!shareOneGpu) {
            for (int r = 0; r < ranks; r++) {
                gpus.set(r, r % Cuda.deviceCount());
            }
        }
        return gpus;
    }

    static LocalWorld twoRanks(long heapBytes, Duration timeout) {
        assumeGpu();
        return LocalWorld.create(WorldConfig.builder().gpus(gpus()).heapSizeBytes(heapBytes).waitTimeout(timeout)
                .transport("p2p").build());
    }
}
