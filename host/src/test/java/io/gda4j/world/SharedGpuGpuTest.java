package io.gda4j.world;

import io.gda4j.cuda.ContextBusyException;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.cuda.Kernel;
import io.gda4j.cuda.KernelArgs;
import io.gda4j.cuda.ModuleImage;
import io.gda4j.cuda.PtxModule;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Ranks that share one GPU share its context: nothing gda4j does may wait for running work in that context while a
 * kernel of one of those ranks may spin (see the package docs). Every world here puts all its ranks on GPU 0, so a
 * one-GPU machine runs it. A call that waited behind a spinning kernel shows as a device wait timeout (the spinning
 * rank gives up after the world's timeout and the call then completes) or as a JUnit timeout; either fails the test.
 */
@Tag("gpu")
@Timeout(120)
class SharedGpuGpuTest {
    private static final Duration WAIT_TIMEOUT = Duration.ofSeconds(8);

    private static LocalWorld world(int ranks, Duration timeout) {
        GpuWorlds.assumeGpu();
        return LocalWorld.create(WorldConfig.builder().gpus(GpuWorlds.gpus(ranks, true)).heapSizeBytes(1 << 20)
                .waitTimeout(timeout).transport("p2p").build());
    }

    /**
     * Ranks 1..n-1 each resolve their kernel right before launching it, and their kernels spin until rank 0
     * signals them; rank 0's first launch comes last. Before modules were shared per GPU, each rank loaded its own
     * copy, and every load after the first waited for the spinning kernels: rank 0 never got to signal.
     */
    @ParameterizedTest(name = "{0} ranks on GPU 0")
    @ValueSource(ints = {2, 4})
    void aRanksFirstLaunchLoadsNothingWhileAnotherRanksKernelSpins(int ranks) {
        try (LocalWorld w = world(ranks, WAIT_TIMEOUT)) {
            HeapBuffer sig = w.heap().allocateSignals(1);
            DeviceMemory[] status = new DeviceMemory[ranks];
            for (int r = 0; r < ranks; r++) {
                status[r] = w.rank(r).context().allocate(8);
                status[r].fill((byte) 0xff);
            }
            for (int r = 1; r < ranks; r++) {
                Rank rank = w.rank(r);
                Kernel waitUntil = rank.kernel(DeviceOps.MODULE, "gda4j_op_wait_until");
                waitUntil.launch(1, 1, 0, rank.stream(), KernelArgs.create().pointer(rank.deviceView())
                        .i64(sig.word(0)).u32(Cmp.GE.code()).i64(1).pointer(rank.scratch().pointer())
                        .pointer(status[r].pointer()));
            }
            assertTrue(w.rank(0).device().kernelsMayBeRunning(), "the waiters spin until rank 0 signals");
            Rank r0 = w.rank(0);
            for (int r = 1; r < ranks; r++) {
                // A kernel rank 0 never launched before: under lazy loading its first launch would load it.
                r0.kernel(DeviceOps.MODULE, "gda4j_op_signal").launch(1, 1, 0, r0.stream(), KernelArgs.create()
                        .pointer(r0.deviceView()).i32(r).i64(sig.word(0)).u32(SignalOp.SET.code()).i64(1)
                        .pointer(status[0].pointer()));
            }
            for (Rank r : w.localRanks()) {
                r.stream().synchronize();
            }
            w.checkErrors();
            for (int r = 0; r < ranks; r++) {
                assertEquals(0, (int) status[r].readLong(0), "device status of rank " + r);
            }
            assertFalse(r0.device().kernelsMayBeRunning());
        }
    }

    /**
     * While rank 1 spins, rank 0 needs a module nobody has loaded: loading would wait for rank 1, which waits for
     * rank 0. It is refused after the grace (CudaDevice.BUSY_GRACE_MILLIS) with a message naming the running stream;
     * so is an allocation. After rank 1 is released, the same calls succeed.
     */
    @Test
    void aLoadOrAllocationBehindASpinningKernelIsRefusedInsteadOfHanging() {
        try (LocalWorld w = world(2, Duration.ofSeconds(60))) {
            DeviceOps ops = new DeviceOps(w);
            HeapBuffer sig = w.heap().allocateSignals(1);
            Rank r0 = w.rank(0);
            Rank r1 = w.rank(1);
            try (DeviceMemory status = r1.context().allocate(8)) {
                r1.kernel(DeviceOps.MODULE, "gda4j_op_wait_until").launch(1, 1, 0, r1.stream(), KernelArgs.create()
                        .pointer(r1.deviceView()).i64(sig.word(0)).u32(Cmp.GE.code()).i64(1)
                        .pointer(r1.scratch().pointer()).pointer(status.pointer()));

                ContextBusyException load = assertThrows(ContextBusyException.class,
                        () -> r0.kernel("bench", "gda4j_put_bandwidth"));
                assertTrue(load.getMessage().contains("loading module bench"), load.getMessage());
                assertTrue(load.getMessage().contains("rank 1 work stream"), load.getMessage());
                assertTrue(load.getMessage().contains("World.loadModules"), load.getMessage());
                assertThrows(ContextBusyException.class, () -> w.loadModules("bench"));
                ContextBusyException alloc = assertThrows(ContextBusyException.class,
                        () -> r0.context().allocate(4096));
                assertTrue(alloc.getMessage().contains("cuMemAlloc"), alloc.getMessage());
                assertThrows(ContextBusyException.class, () -> r0.context().allocateMappedHost(4096));

                // A module already loaded on the GPU is fine: signal rank 1 through it.
                Kernel signal = r0.kernel(DeviceOps.MODULE, "gda4j_op_signal");
                signal.launch(1, 1, 0, r0.stream(), KernelArgs.create().pointer(r0.deviceView()).i32(1)
                        .i64(sig.word(0)).u32(SignalOp.SET.code()).i64(1).pointer(r0.scratch().pointer()));
                r0.stream().synchronize();
                r1.stream().synchronize();
                w.checkErrors();
                assertEquals(0, (int) status.readLong(0));
            }
            assertFalse(w.rank(0).device().kernelsMayBeRunning());
            w.loadModules("bench");
            assertEquals("gda4j_put_bandwidth", r0.kernel("bench", "gda4j_put_bandwidth").name());
            w.rank(0).context().allocate(4096).close();
            assertEquals(1L, ops.waitUntil(1, sig.word(0), Cmp.GE, 1), "the world still works after the refusals");
        }
    }

    /**
     * A world closed while a rank's kernel still waits (a failed test, an exception between launch and sync) stops
     * that kernel through the abort flag before freeing anything, instead of freeing memory under it or waiting for
     * the 60 s device timeout.
     */
    @Test
    @Timeout(30)
    void closeStopsASpinningKernelBeforeFreeingItsMemory() {
        LocalWorld w = world(2, Duration.ofSeconds(60));
        HeapBuffer sig = w.heap().allocateSignals(1);
        Rank r1 = w.rank(1);
        w.loadModules(DeviceOps.MODULE);
        r1.kernel(DeviceOps.MODULE, "gda4j_op_wait_until").launch(1, 1, 0, r1.stream(), KernelArgs.create()
                .pointer(r1.deviceView()).i64(sig.word(0)).u32(Cmp.GE.code()).i64(1)
                .pointer(r1.scratch().pointer()).pointer(r1.scratch().pointer().plusBytes(8)));
        assertTrue(r1.device().kernelsMayBeRunning());
        w.close();
        assertFalse(r1.device().kernelsMayBeRunning(), "close returned with the kernel still running");
    }

    /** Module names stand for one image per world: a second, different image under a used name is refused. */
    @Test
    void oneNameOneImage() {
        try (LocalWorld w = world(2, WAIT_TIMEOUT)) {
            w.loadModules(DeviceOps.MODULE);
            ModuleImage other = ModuleImage.bytes(DeviceOps.MODULE, PtxModule.readPtx("proxy"));
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> w.rank(0).kernel(other, "gda4j_op_signal"));
            assertTrue(e.getMessage().contains("give different modules different names"), e.getMessage());
        }
    }
}
