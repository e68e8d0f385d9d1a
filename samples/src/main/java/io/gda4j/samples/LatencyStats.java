package io.gda4j.samples;

import org.HdrHistogram.Histogram;

import java.util.List;

/**
 * Summary of round-trip samples in nanoseconds, from an HdrHistogram of 3 significant digits: what nccl-tests and
 * perftest users look for (min, median, mean, standard deviation, p99, p99.9, max).
 *
 * @param samples      how many round trips were measured
 * @param minNanos     fastest
 * @param medianNanos  50th percentile
 * @param p99Nanos     99th percentile
 * @param maxNanos     slowest
 * @param meanNanos    mean
 * @param stdevNanos   standard deviation
 * @param p999Nanos    99.9th percentile
 */
record LatencyStats(long samples, long minNanos, long medianNanos, long p99Nanos, long maxNanos, double meanNanos,
                    double stdevNanos, long p999Nanos) {
    /** The statistics' columns of a table, in microseconds, in the order {@link #micros} gives them. */
    static final List<String> COLUMNS = List.of("min_us", "median_us", "mean_us", "stdev_us", "p99_us", "p99.9_us",
            "max_us");

    static LatencyStats of(int[] nanos, int count) {
        Histogram h = new Histogram(60_000_000_000L, 3);
        for (int i = 0; i < count; i++) {
            h.recordValue(Integer.toUnsignedLong(nanos[i]));
        }
        return of(h);
    }

    /** Summary of {@code nanos[0 .. count)}, e.g. host-timed {@link System#nanoTime()} differences. */
    static LatencyStats of(long[] nanos, int count) {
        Histogram h = new Histogram(60_000_000_000L, 3);
        for (int i = 0; i < count; i++) {
            h.recordValue(Math.max(0, Math.min(nanos[i], h.getHighestTrackableValue())));
        }
        return of(h);
    }

    private static LatencyStats of(Histogram h) {
        return new LatencyStats(h.getTotalCount(), h.getMinValue(), h.getValueAtPercentile(50),
                h.getValueAtPercentile(99), h.getMaxValue(), h.getMean(), h.getStdDeviation(),
                h.getValueAtPercentile(99.9));
    }

    double medianMicros() {
        return medianNanos / 1e3;
    }

    /** The {@link #COLUMNS} cells: min, median, mean, stdev, p99, p99.9, max in microseconds. */
    Object[] micros() {
        return new Object[] {minNanos / 1e3, medianNanos / 1e3, meanNanos / 1e3, stdevNanos / 1e3, p99Nanos / 1e3,
            p999Nanos / 1e3, maxNanos / 1e3};
    }
}
