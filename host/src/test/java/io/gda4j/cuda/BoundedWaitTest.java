package io.gda4j.cuda;

import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The loop behind CudaStream's bounded synchronize, with a stand-in for the stream's query and the clock: it returns
 * once the work is done, gives up at the limit (a kernel that never returns), and ends on an interrupt, which a
 * blocking cuStreamSynchronize ignores.
 */
class BoundedWaitTest {
    @Test
    void returnsOnceTheWorkIsDone() {
        AtomicInteger polls = new AtomicInteger();
        assertTrue(BoundedWait.until(() -> polls.incrementAndGet() >= 1000, TimeUnit.SECONDS.toNanos(10),
                System::nanoTime, "the work"));
        assertEquals(1000, polls.get(), "no poll after the one that saw it done");
    }

    @Test
    void givesUpAtTheLimitAskingOnceMoreThere() {
        AtomicLong now = new AtomicLong();
        AtomicInteger polls = new AtomicInteger();
        // Each look at the clock moves it 1 ms on: a limit of 10 ms is reached at the 10th look.
        boolean done = BoundedWait.until(() -> polls.incrementAndGet() < 0, TimeUnit.MILLISECONDS.toNanos(10),
                () -> now.getAndAdd(TimeUnit.MILLISECONDS.toNanos(1)), "the work");
        assertFalse(done);
        assertEquals(10 * BoundedWait.POLLS_PER_LOOK + 1, polls.get(), "10 batches, then one more poll at the limit");
    }

    @Test
    void workThatEndsJustAtTheLimitCounts() {
        AtomicLong now = new AtomicLong();
        AtomicInteger polls = new AtomicInteger();
        int last = 3 * BoundedWait.POLLS_PER_LOOK + 1;
        assertTrue(BoundedWait.until(() -> polls.incrementAndGet() >= last, TimeUnit.MILLISECONDS.toNanos(3),
                () -> now.getAndAdd(TimeUnit.MILLISECONDS.toNanos(1)), "the work"));
    }

    @Test
    void anInterruptEndsTheWaitAndStays() {
        Thread.currentThread().interrupt();
        try {
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> BoundedWait.until(() -> false, TimeUnit.SECONDS.toNanos(100), System::nanoTime,
                            "the work on rank 0 work stream"));
            assertTrue(e.getMessage().contains("interrupted while waiting for the work on rank 0 work stream"),
                    e.getMessage());
            assertTrue(Thread.currentThread().isInterrupted(), "the interrupt status stays set for the caller");
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void neverDoneWithTheRealClockEndsAtTheLimit() {
        long start = System.nanoTime();
        assertFalse(BoundedWait.until(() -> false, TimeUnit.MILLISECONDS.toNanos(20), System::nanoTime, "the work"));
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(20), "it waited the limit out");
    }
}
