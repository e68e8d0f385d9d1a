package io.gda4j.ibgda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gda4j.cuda.Cuda;
import io.gda4j.nic.RingPlacement;
import io.gda4j.transport.Transport;
import io.gda4j.world.LocalWorld;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The whole IBGDA device API suite of {@link IbgdaGpuTest} (the transport conformance trials, gets, inline writes,
 * atomics, ring and counter wrap, every fault class) again with the QPs' send queues, doorbell records and CQs in GPU
 * memory ({@code GDA4J_IBGDA_RINGS=gpu}) on the emulated NIC, whose engine copies what it reads out of GPU memory and
 * each CQE into it: the kernels' WQE stores and CQE polls stay in their GPU's memory, as on a ConnectX with
 * GPU-resident rings.
 */
@Tag("gpu")
class IbgdaGpuRingsGpuTest extends IbgdaGpuTest {
    @Override
    protected LocalWorld createWorld() {
        System.setProperty(IbgdaConfig.RINGS_PROP_NAME, RingPlacement.GPU.word());
        try {
            return ibgdaWorld("auto");
        } finally {
            System.clearProperty(IbgdaConfig.RINGS_PROP_NAME);
        }
    }

    @Test
    void theRingsAreInGpuMemory() {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
        try (LocalWorld w = createWorld()) {
            assertEquals(Transport.IBGDA, w.transport(0, 1));
            var nic = nic(w);
            assertTrue(nic.gpuRingsUnsupportedReason().isEmpty());
            assertTrue(nic.openQps(RingPlacement.GPU) >= 3, "the pair's two QPs and a loopback QP keep their rings in"
                    + " GPU memory: " + nic.openQps(RingPlacement.GPU));
            assertEquals(0, nic.openQps(RingPlacement.HOST), "a QP kept host rings");
        }
    }
}
