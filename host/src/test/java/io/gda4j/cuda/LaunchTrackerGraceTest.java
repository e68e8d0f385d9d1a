package io.gda4j.cuda;

import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The grace of {@link CudaDevice#requireNoRunningKernels}: a kernel that ends on its own while the call waits is not
 * a reason to refuse (a benchmark's last step, a kernel slowed by another process on the GPU), one that is still
 * running when the grace is over is.
 */
class LaunchTrackerGraceTest {

    @Test
    void aKernelThatEndsWithinTheGraceIsWaitedOut() {
        AtomicInteger queries = new AtomicInteger();
        // still running for the first three queries, as a slow but finite kernel is
        String left = LaunchTracker.stillThereAfter(() -> queries.incrementAndGet() <= 3 ? "stream" : null,
                CudaDevice.BUSY_GRACE_MILLIS * 1_000_000L);
        assertNull(left);
        assertEquals(4, queries.get(), "asked again until the kernel was done, and no more");
    }

    @Test
    void aKernelStillRunningAfterTheGraceIsNamed() {
        AtomicInteger queries = new AtomicInteger();
        long start = System.nanoTime();
        String left = LaunchTracker.stillThereAfter(() -> {
            queries.incrementAndGet();
            return "stream";
        }, 20_000_000L);
        assertEquals("stream", left);
        assertTrue(System.nanoTime() - start >= 20_000_000L, "refused only once the grace was over");
        assertTrue(queries.get() > 1, "asked more than once");
    }

    @Test
    void nothingRunningIsAnsweredWithOneQuery() {
        AtomicInteger queries = new AtomicInteger();
        assertNull(LaunchTracker.stillThereAfter(() -> {
            queries.incrementAndGet();
            return null;
        }, CudaDevice.BUSY_GRACE_MILLIS * 1_000_000L));
        assertEquals(1, queries.get());
    }

    @Test
    void theGraceIsAboutASecond() {
        // far above a finite kernel's time, far below the device-side wait timeout (10 s by default)
        assertTrue(CudaDevice.BUSY_GRACE_MILLIS >= 100 && CudaDevice.BUSY_GRACE_MILLIS <= 2000);
    }
}
