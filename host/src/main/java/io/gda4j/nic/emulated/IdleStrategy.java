package io.gda4j.nic.emulated;

import java.util.Locale;
import java.util.concurrent.locks.LockSupport;

/**
 * What a polling loop does when a pass found no work (Agrona's idle strategies, reduced to two). {@link #idle(int)}
 * is called after every pass with the work done; a non-zero count resets the back-off.
 */
public interface IdleStrategy {
    /** Called after each pass with the work it did. */
    void idle(int workCount);

    /** Name for {@code gda4j info}. */
    String name();

    /** Never yields the core: lowest latency, one core busy for as long as the NIC is open. */
    static IdleStrategy busySpin() {
        return new IdleStrategy() {
            @Override
            public void idle(int workCount) {
                Thread.onSpinWait();
            }

            @Override
            public String name() {
                return "spin";
            }
        };
    }

    /**
     * Spins {@code spins} idle passes, yields {@code yields} more, then parks from 1 us doubling to
     * {@code maxParkNanos}: a doorbell rung after a long quiet spell waits up to {@code maxParkNanos} longer.
     */
    static IdleStrategy backoff(int spins, int yields, long maxParkNanos) {
        return new IdleStrategy() {
            private int idlePasses;
            private long parkNanos = 1_000;

            @Override
            public void idle(int workCount) {
                if (workCount > 0) {
                    idlePasses = 0;
                    parkNanos = 1_000;
                    return;
                }
                idlePasses++;
                if (idlePasses <= spins) {
                    Thread.onSpinWait();
                } else if (idlePasses <= spins + yields) {
                    Thread.yield();
                } else {
                    LockSupport.parkNanos(parkNanos);
                    parkNanos = Math.min(parkNanos * 2, maxParkNanos);
                }
            }

            @Override
            public String name() {
                return "backoff";
            }
        };
    }

    /** {@code spin} or {@code backoff} (100k spins, 1k yields, parks up to 100 us). */
    static IdleStrategy named(String name) {
        switch (name.trim().toLowerCase(Locale.ROOT)) {
            case "spin":
                return busySpin();
            case "backoff":
                return backoff(100_000, 1_000, 100_000);
            default:
                throw new IllegalArgumentException("unknown idle strategy '" + name + "': choose spin or backoff");
        }
    }
}
