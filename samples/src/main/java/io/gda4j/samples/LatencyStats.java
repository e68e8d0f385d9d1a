package io.gda4j.samples;

import org.HdrHistogram.Histogram;

/**
 * Summary of round-trip samples in nanoseconds (HdrHistogram, 3 significant digits).
 *
 * @param samples   how many round trips were measured
 * @param minNanos  fastest
 * @param medianNanos 50th percentile
 * @param p99Nanos  99th percentile
 * @param maxNanos  slowest
 * @param meanNanos mean
 */
record LatencyStats(long samples, long minNanos, long medianNanos, long p99Nanos, long maxNanos, double meanNanos) {

    static LatencyStats of(int[] nanos, int count) {
        Histogram h = new Histogram(60_000_000_000L, 3);
        for (int i = 0; i < count; i++) {
            h.recordValue(Integer.toUnsignedLong(nanos[i]));
        }
        return new LatencyStats(h.getTotalCount(), h.getMinValue(), h.getValueAtPercentile(50),
                h.getValueAtPercentile(99), h.getMaxValue(), h.getMean());
    }

    /** Summary of {@code nanos[0 .. count)}, e.g. host-timed {@link System#nanoTime()} differences. */
    static LatencyStats of(long[] nanos, int count) {
        Histogram h = new Histogram(60_000_000_000L, 3);
        for (int i = 0; i < count; i++) {
            h.recordValue(Math.max(0, Math.min(nanos[i], h.getHighestTrackableValue())));
        }
        return new LatencyStats(h.getTotalCount(), h.getMinValue(), h.getValueAtPercentile(50),
                h.getValueAtPercentile(99), h.getMaxValue(), h.getMean());
    }

    double medianMicros() {
        return medianNanos / 1e3;
    }
}
