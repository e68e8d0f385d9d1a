package io.gda4j.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Ranks as child JVMs on localhost: the bootstrap across real processes, and SIGKILL detection. */
@Timeout(90)
class BootstrapProcessesTest {
    private static final int SIZE = 3;
    private static final long DETECTION_LIMIT_MILLIS = 10_000;
    private final List<Child> children = new ArrayList<>();

    /** One child and the lines it printed, each stamped with the parent's clock when it arrived. */
    private record Line(String text, long arrivedNanos) {
    }

    private static final class Child {
        final int rank;
        final Process process;
        final LinkedBlockingQueue<Line> lines = new LinkedBlockingQueue<>();
        final StringBuilder transcript = new StringBuilder();

        Child(int rank, Process process) {
            this.rank = rank;
            this.process = process;
            Thread t = new Thread(() -> {
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
            t.setDaemon(true);
            t.start();
        }

        /** The next line starting with {@code prefix}, failing after {@code seconds} with what the child said. */
        Line await(String prefix, long seconds) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            while (true) {
                Line l = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (l == null) {
                    String said;
                    synchronized (transcript) {
                        said = transcript.toString();
                    }
                    throw new AssertionError("rank " + rank + " printed no '" + prefix + "' within " + seconds
                            + " s; its output:\n" + said);
                }
                if (l.text().startsWith(prefix)) {
                    return l;
                }
            }
        }
    }

    private Child start(int rank, int port, String mode) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-Xmx64m",
                "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
                BootstrapChild.class.getName(), Integer.toString(rank), Integer.toString(SIZE),
                Integer.toString(port), "test-job", mode);
        pb.redirectErrorStream(true);
        Child c = new Child(rank, pb.start());
        children.add(c);
        return c;
    }

    /** Rank 0 first (it prints its ephemeral port), then the others at that port. */
    private List<Child> world(String mode) throws Exception {
        Child root = start(0, 0, mode);
        int port = Integer.parseInt(root.await("PORT ", 30).text().substring(5).strip());
        List<Child> all = new ArrayList<>(List.of(root));
        for (int r = 1; r < SIZE; r++) {
            all.add(start(r, port, mode));
        }
        return all;
    }

    @AfterEach
    void killLeftovers() {
        for (Child c : children) {
            c.process.destroyForcibly();
        }
    }

    @Test
    void threeProcessesAgreeOnAllGathersAndBarriers() throws Exception {
        List<Child> all = world("gather");
        for (Child c : all) {
            for (int round = 0; round < 3; round++) {
                String line = c.await("GATHER ", 60).text();
                assertEquals("GATHER " + c.rank + " r0x" + round + ",r1x" + round + ",r2x" + round, line);
            }
            c.await("DONE ", 30);
            assertTrue(c.process.waitFor(30, TimeUnit.SECONDS), "rank " + c.rank + " exits after close()");
            assertEquals(0, c.process.exitValue());
        }
    }

    @ParameterizedTest(name = "rank {0} killed")
    @ValueSource(ints = {2, 0})
    void aRankKilledWithSigkillIsDetectedByEverySurvivorWithinTenSeconds(int victim) throws Exception {
        List<Child> all = world("survive:" + victim);
        for (Child c : all) {
            c.await("READY ", 60);
        }
        // the survivors are inside a barrier the victim never enters (its collective limit is 60 s)
        Thread.sleep(200);
        long killedAt = System.nanoTime();
        all.get(victim).process.destroyForcibly(); // SIGKILL: no goodbye, no shutdown hook
        for (Child c : all) {
            if (c.rank == victim) {
                continue;
            }
            Line detected = c.await("DETECTED ", DETECTION_LIMIT_MILLIS / 1000 + 5);
            long millis = TimeUnit.NANOSECONDS.toMillis(detected.arrivedNanos() - killedAt);
            System.out.println("rank " + c.rank + " detected the SIGKILL of rank " + victim + " in " + millis
                    + " ms: " + detected.text());
            assertTrue(detected.text().startsWith("DETECTED " + c.rank + " dead=" + victim + " rank " + victim
                    + " failed"), detected.text());
            assertTrue(millis < DETECTION_LIMIT_MILLIS, "detected after " + millis + " ms");
            Line closed = c.await("CLOSED ", 15);
            assertNotNull(closed);
            assertTrue(c.process.waitFor(15, TimeUnit.SECONDS), "rank " + c.rank + " exits after close()");
            assertEquals(0, c.process.exitValue());
        }
    }
}
