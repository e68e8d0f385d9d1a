package io.gda4j.world;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link Rank#raiseAbort()} from the host stops a kernel that is spinning on the device: the abort word is written
 * through a stream-write host flag on the rank's control stream while the work stream is busy. Needs a CUDA GPU.
 */
@Tag("gpu")
class RaiseAbortGpuTest {

    @Test
    void raiseAbortStopsAKernelSpinningOnTheDevice() throws Exception {
        // The world's wait timeout is long: only the abort flag can end this wait in time.
        try (LocalWorld w = GpuWorlds.twoRanks(1 << 20, Duration.ofSeconds(60))) {
            HeapBuffer signal = w.heap().allocateSignals(1);
            assertFalse(w.rank(0).abortRaised(), "a new world starts with its abort flag down");
            DeviceOps ops = new DeviceOps(w);
            ExecutorService waiter = Executors.newSingleThreadExecutor();
            try {
                Future<Long> waiting = waiter.submit(() -> ops.waitUntil(0, signal.word(0), Cmp.GE, 1));
                Thread.sleep(200);
                // The message is a Supplier: built eagerly, outcome() would block on the future until the timeout.
                assertFalse(waiting.isDone(), () -> "wait_until returned although nobody signalled: " + outcome(waiting));
                assertFalse(w.rank(0).abortRaised(), "nothing raised the flag yet");
                w.rank(0).raiseAbort();
                assertTrue(w.rank(0).abortRaised(), "raiseAbort returns once the word is in device memory");
                ExecutionException e = assertThrows(ExecutionException.class,
                        () -> waiting.get(30, TimeUnit.SECONDS), "the spinning kernel did not stop");
                assertInstanceOf(DeviceErrorException.class, e.getCause());
                assertTrue(e.getCause().getMessage().contains("abort flag was raised"), e.getCause().getMessage());
            } finally {
                waiter.shutdownNow();
            }
            w.clearErrors();
            assertFalse(w.rank(0).abortRaised(), "clearErrors lowers the flag again");
            w.checkErrors();
        }
    }

    private static String outcome(Future<Long> f) {
        try {
            return "saw " + f.get();
        } catch (Exception e) {
            return e.toString();
        }
    }
}
