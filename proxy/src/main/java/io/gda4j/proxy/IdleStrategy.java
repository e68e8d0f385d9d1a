package io.gda4j.proxy;

import java.util.Locale;
import java.util.concurrent.locks.LockSupport;

/**
 * What a polling thread does after a cycle of {@link Agent#doWork()}: nothing when there was work, and something
 * cheaper than spinning when there was none, if latency allows. Busy spinning answers a GPU trigger soonest (the
 * default); yielding and backing off leave the core to others at the cost of microseconds.
 */
public interface IdleStrategy {
    /** Called after each work cycle with the work it did. */
    void idle(int workCount);

    /** Forgets any back-off state (after work arrived). */
    void reset();

    /** The name {@link #parse} understands. */
    String alias();

    /** busy-spin, yield or backoff. */
    static IdleStrategy parse(String name) {
        switch (name.trim().toLowerCase(Locale.ROOT)) {
            case BusySpin.ALIAS:
                return new BusySpin();
            case Yielding.ALIAS:
                return new Yielding();
            case Backoff.ALIAS:
                return new Backoff(Backoff.DEFAULT_SPINS, Backoff.DEFAULT_YIELDS, Backoff.DEFAULT_MIN_PARK_NANOS,
                        Backoff.DEFAULT_MAX_PARK_NANOS);
            default:
                throw new IllegalArgumentException("unknown idle strategy '" + name + "': use " + BusySpin.ALIAS + ", "
                        + Yielding.ALIAS + " or " + Backoff.ALIAS);
        }
    }

    /** Spins with {@link Thread#onSpinWait()}: the lowest latency, one core per thread. */
    final class BusySpin implements IdleStrategy {
        public static final String ALIAS = "busy-spin";

        @Override
        public void idle(int workCount) {
            if (workCount == 0) {
                Thread.onSpinWait();
            }
        }

        @Override
        public void reset() {
        }

        @Override
        public String alias() {
            return ALIAS;
        }
    }

    /** {@link Thread#yield()} when idle: shares the core, adds a scheduler pass to the reaction time. */
    final class Yielding implements IdleStrategy {
        public static final String ALIAS = "yield";

        @Override
        public void idle(int workCount) {
            if (workCount == 0) {
                Thread.yield();
            }
        }

        @Override
        public void reset() {
        }

        @Override
        public String alias() {
            return ALIAS;
        }
    }

    /** Spins, then yields, then parks for exponentially longer up to a limit; back to spinning as soon as work comes. */
    final class Backoff implements IdleStrategy {
        public static final String ALIAS = "backoff";
        static final int DEFAULT_SPINS = 10_000;
        static final int DEFAULT_YIELDS = 100;
        static final long DEFAULT_MIN_PARK_NANOS = 1_000;
        static final long DEFAULT_MAX_PARK_NANOS = 1_000_000;

        private final int maxSpins;
        private final int maxYields;
        private final long minParkNanos;
        private final long maxParkNanos;
        private int spins;
        private int yields;
        private long parkNanos;

        public Backoff(int maxSpins, int maxYields, long minParkNanos, long maxParkNanos) {
            if (maxSpins < 0 || maxYields < 0 || minParkNanos < 1 || maxParkNanos < minParkNanos) {
                throw new IllegalArgumentException("back-off needs spins >= 0, yields >= 0 and 1 <= minPark <= maxPark");
            }
            this.maxSpins = maxSpins;
            this.maxYields = maxYields;
            this.minParkNanos = minParkNanos;
            this.maxParkNanos = maxParkNanos;
            reset();
        }

        @Override
        public void idle(int workCount) {
            if (workCount > 0) {
                reset();
            } else if (spins < maxSpins) {
                spins++;
                Thread.onSpinWait();
            } else if (yields < maxYields) {
                yields++;
                Thread.yield();
            } else {
                LockSupport.parkNanos(parkNanos);
                parkNanos = Math.min(parkNanos * 2, maxParkNanos);
            }
        }

        @Override
        public void reset() {
            spins = 0;
            yields = 0;
            parkNanos = minParkNanos;
        }

        @Override
        public String alias() {
            return ALIAS;
        }
    }
}
