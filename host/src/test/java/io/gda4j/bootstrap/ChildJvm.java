package io.gda4j.bootstrap;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A rank in a child JVM of this test's class path, talking to the test by lines on stdout (stderr merged), each line
 * stamped with the parent's clock when it arrived: for tests of worlds of many processes.
 */
public final class ChildJvm {
    /** A line the child printed and when it reached the parent. */
    public record Line(String text, long arrivedNanos) {
    }

    private static final long EXIT_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    public final int rank;
    public final Process process;
    private final LinkedBlockingQueue<Line> lines = new LinkedBlockingQueue<>();
    private final StringBuilder transcript = new StringBuilder();
    private final Thread reader;
    /** Lines that mean the child failed: await stops at them instead of waiting out its time. */
    private final List<String> failurePrefixes;

    private ChildJvm(int rank, Process process, List<String> failurePrefixes) {
        this.rank = rank;
        this.process = process;
        this.failurePrefixes = failurePrefixes;
        this.reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String s; (s = r.readLine()) != null; ) {
                    synchronized (transcript) {
                        transcript.append(s).append('\n');
                    }
                    lines.add(new Line(s, System.nanoTime()));
                }
            } catch (IOException e) {
                // the process ended
            }
        }, "child-" + rank + "-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * The class path this test runs on. {@code java.class.path} alone is not it: the JUnit console launcher
     * ({@code --class-path}) loads the tests through a class loader of its own, and a child started with only the
     * JVM's class path could not find them.
     */
    public static String classPath() {
        LinkedHashSet<String> entries = new LinkedHashSet<>();
        for (ClassLoader l = ChildJvm.class.getClassLoader(); l != null; l = l.getParent()) {
            if (l instanceof URLClassLoader u) {
                for (URL url : u.getURLs()) {
                    try {
                        entries.add(Path.of(url.toURI()).toString());
                    } catch (URISyntaxException | IllegalArgumentException e) {
                        // not a file: a child JVM could not use it either
                    }
                }
            }
        }
        entries.addAll(Arrays.asList(System.getProperty("java.class.path").split(File.pathSeparator)));
        entries.remove("");
        return String.join(File.pathSeparator, entries);
    }

    /**
     * Starts {@code mainClass} with {@code args} in a JVM with native access and {@code maxHeap}.
     *
     * @param environment variables to set (a null value removes the variable)
     */
    public static ChildJvm start(int rank, String maxHeap, String mainClass, List<String> args,
                                 Map<String, String> environment, List<String> failurePrefixes) throws IOException {
        return start(List.of(), rank, maxHeap, mainClass, args, environment, failurePrefixes);
    }

    /**
     * As {@link #start(int, String, String, List, Map, List)}, the JVM's command line after {@code launcher} (a
     * program that runs the rest, such as {@code prlimit --nofile=N:N --}).
     */
    public static ChildJvm start(List<String> launcher, int rank, String maxHeap, String mainClass, List<String> args,
                                 Map<String, String> environment, List<String> failurePrefixes) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(launcher);
        command.addAll(List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xmx" + maxHeap,
                "-XX:TieredStopAtLevel=1", "-cp", classPath(), mainClass));
        command.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(command);
        environment.forEach((k, v) -> {
            if (v == null) {
                pb.environment().remove(k);
            } else {
                pb.environment().put(k, v);
            }
        });
        pb.redirectErrorStream(true);
        return new ChildJvm(rank, pb.start(), failurePrefixes);
    }

    /** The next line starting with {@code prefix}; fails after {@code seconds}, or at a failure line, with the output. */
    public Line await(String prefix, long seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        boolean exited = false;
        while (true) {
            // Short polls, so that a child that died (a crash, a missing class) fails the test at once instead of
            // after the whole wait: GPU time is scarce.
            Line l = lines.poll(Math.min(EXIT_POLL_NANOS, Math.max(0, deadline - System.nanoTime())),
                    TimeUnit.NANOSECONDS);
            if (l == null && exited) {
                throw new AssertionError("rank " + rank + " exited with " + process.exitValue() + " without printing '"
                        + prefix + "'; its output:\n" + transcript());
            }
            if (l == null && !process.isAlive()) {
                exited = true;
                reader.join(2_000); // its last lines reach the queue before the next poll
                continue;
            }
            if (l == null && System.nanoTime() - deadline >= 0) {
                throw new AssertionError("rank " + rank + " printed no '" + prefix + "' within " + seconds
                        + " s; its output:\n" + transcript());
            }
            if (l == null) {
                continue;
            }
            if (l.text().startsWith(prefix)) {
                return l;
            }
            for (String bad : failurePrefixes) {
                if (l.text().startsWith(bad)) {
                    throw new AssertionError("rank " + rank + ": " + l.text() + "\nits output:\n" + transcript());
                }
            }
        }
    }

    public String transcript() {
        synchronized (transcript) {
            return transcript.toString();
        }
    }
}
