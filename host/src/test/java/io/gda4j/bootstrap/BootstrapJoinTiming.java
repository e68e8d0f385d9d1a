package io.gda4j.bootstrap;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * How long a world of many processes takes to join, measured on this host: {@code size} child JVMs
 * ({@link BootstrapChild} in mode {@code timedJoin}) start, load, and wait; then all are told to go at once, and a
 * run's join time is from the first {@code GO} to the last rank's return from {@link Bootstrap#join} (one clock:
 * {@link System#nanoTime} is CLOCK_MONOTONIC for every process of a Linux host). JVM start-up is not in it.
 * Also the CPU time the joins took, summed over the processes (what the bootstrap costs, whatever else the host
 * runs). Prints each run and the medians; a benchmark to run by hand, not a test:
 * {@code java -cp host/target/classes:host/target/test-classes io.gda4j.bootstrap.BootstrapJoinTiming 32 5}.
 */
public final class BootstrapJoinTiming {
    private BootstrapJoinTiming() {
    }

    public static void main(String[] args) throws Exception {
        int size = args.length > 0 ? Integer.parseInt(args[0]) : 32;
        int runs = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        double[] joinMillis = new double[runs];
        double[] rootMillis = new double[runs];
        double[] cpuMillis = new double[runs];
        for (int run = 0; run < runs; run++) {
            long[] times = oneRun(size, run);
            joinMillis[run] = times[0] / 1e6;
            rootMillis[run] = times[1] / 1e6;
            cpuMillis[run] = times[2] / 1e6;
            System.out.printf("run %d: %d processes joined in %.1f ms (the root's join: %.1f ms; CPU: %.1f ms)%n",
                    run + 1, size, joinMillis[run], rootMillis[run], cpuMillis[run]);
        }
        System.out.printf("median of %d runs: %.1f ms (the root's join: %.1f ms; CPU: %.1f ms)%n", runs,
                median(joinMillis), median(rootMillis), median(cpuMillis));
    }

    private static double median(double[] values) {
        double[] v = values.clone();
        Arrays.sort(v);
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    /** {first GO to the last return, the root's own join, the CPU of every join}, in nanoseconds. */
    private static long[] oneRun(int size, int run) throws Exception {
        List<ChildJvm> children = new ArrayList<>();
        try {
            String token = "join-timing-" + run + "-0123456789abcdef";
            ChildJvm root = start(0, size, 0, token);
            children.add(root);
            int port = Integer.parseInt(root.await("PORT ", 60).text().substring(5).strip());
            for (int r = 1; r < size; r++) {
                children.add(start(r, size, port, token));
            }
            for (ChildJvm c : children) {
                c.await("LOADED ", 120);
            }
            Thread.sleep(500); // the start-ups' last class loading and JIT settle before the clock starts
            for (ChildJvm c : children) {
                OutputStream in = c.process.getOutputStream();
                in.write("GO\n".getBytes(StandardCharsets.US_ASCII));
                in.flush();
            }
            long firstStart = Long.MAX_VALUE;
            long lastEnd = Long.MIN_VALUE;
            long rootTook = 0;
            long cpu = 0;
            for (ChildJvm c : children) {
                String[] f = c.await("JOINED ", 120).text().split(" ");
                long start = Long.parseLong(f[2]);
                long end = Long.parseLong(f[3]);
                firstStart = Math.min(firstStart, start);
                lastEnd = Math.max(lastEnd, end);
                cpu += Long.parseLong(f[4]);
                if (c.rank == 0) {
                    rootTook = end - start;
                }
            }
            for (ChildJvm c : children) {
                if (!c.process.waitFor(60, TimeUnit.SECONDS) || c.process.exitValue() != 0) {
                    throw new IllegalStateException("rank " + c.rank + " did not exit cleanly:\n" + c.transcript());
                }
            }
            return new long[] {lastEnd - firstStart, rootTook, cpu};
        } finally {
            for (ChildJvm c : children) {
                c.process.destroyForcibly();
            }
        }
    }

    private static ChildJvm start(int rank, int size, int port, String token) throws IOException {
        return ChildJvm.start(rank, "64m", BootstrapChild.class.getName(), List.of(Integer.toString(rank),
                Integer.toString(size), Integer.toString(port), token, "timedJoin"), Map.of(), List.of());
    }
}
