package io.gda4j.cuda;

import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * Polls a condition until it holds, a limit passes, or the thread is interrupted: the loop behind
 * {@link CudaStream#synchronize(java.time.Duration, String)}. A blocking driver wait ({@code cuStreamSynchronize})
 * returns only when the work ends, so a kernel that never ends holds its caller forever, deaf to interrupts and
 * timeouts alike; a poll ends either way.
 */
final class BoundedWait {
    /** Polls between two looks at the clock and the interrupt status: a poll is a driver call of about 1 us. */
    static final int POLLS_PER_LOOK = 64;
    /** After this long the loop yields between batches, so long waits leave the core to others, as the driver does. */
    static final long SPIN_ONLY_NANOS = 1_000_000;

    private BoundedWait() {
    }

    /**
     * Whether {@code done} held within {@code limitNanos} of {@code clock} (it is asked once more at the limit).
     *
     * @throws IllegalStateException when the thread is interrupted while it waits (its interrupt status stays set)
     */
    static boolean until(BooleanSupplier done, long limitNanos, LongSupplier clock, String what) {
        long start = clock.getAsLong();
        while (true) {
            for (int i = 0; i < POLLS_PER_LOOK; i++) {
                if (done.getAsBoolean()) {
                    return true;
                }
                Thread.onSpinWait();
            }
            if (Thread.currentThread().isInterrupted()) {
                throw new IllegalStateException("interrupted while waiting for " + what
                        + "; the work stays queued and may still run");
            }
            long waited = clock.getAsLong() - start;
            if (waited >= limitNanos) {
                return done.getAsBoolean();
            }
            if (waited >= SPIN_ONLY_NANOS) {
                Thread.yield();
            }
        }
    }
}
