package io.gda4j.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
    private final List<ChildJvm> children = new ArrayList<>();

    private ChildJvm start(int rank, int port, String mode) throws IOException {
        // an all-gather of 8 MiB per rank holds a 24 MiB result beside the parts
        String heap = mode.startsWith("stoppedGather:") ? "256m" : "64m";
        ChildJvm c = ChildJvm.start(rank, heap, BootstrapChild.class.getName(), List.of(Integer.toString(rank),
                Integer.toString(SIZE), Integer.toString(port), "test-job", mode), Map.of(), List.of());
        children.add(c);
        return c;
    }

    /** Rank 0 first (it prints its ephemeral port), then the others at that port. */
    private List<ChildJvm> world(String mode) throws Exception {
        ChildJvm root = start(0, 0, mode);
        int port = Integer.parseInt(root.await("PORT ", 30).text().substring(5).strip());
        List<ChildJvm> all = new ArrayList<>(List.of(root));
        for (int r = 1; r < SIZE; r++) {
            all.add(start(r, port, mode));
        }
        return all;
    }

    @AfterEach
    void killLeftovers() {
        for (ChildJvm c : children) {
            c.process.destroyForcibly();
        }
    }

    @Test
    void threeProcessesAgreeOnAllGathersAndBarriers() throws Exception {
        List<ChildJvm> all = world("gather");
        for (ChildJvm c : all) {
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
        List<ChildJvm> all = world("survive:" + victim);
        for (ChildJvm c : all) {
            c.await("READY ", 60);
        }
        // the survivors are inside a barrier the victim never enters (its collective limit is 60 s)
        Thread.sleep(200);
        long killedAt = System.nanoTime();
        all.get(victim).process.destroyForcibly(); // SIGKILL: no goodbye, no shutdown hook
        for (ChildJvm c : all) {
            if (c.rank == victim) {
                continue;
            }
            ChildJvm.Line detected = c.await("DETECTED ", DETECTION_LIMIT_MILLIS / 1000 + 5);
            long millis = TimeUnit.NANOSECONDS.toMillis(detected.arrivedNanos() - killedAt);
            System.out.println("rank " + c.rank + " detected the SIGKILL of rank " + victim + " in " + millis
                    + " ms: " + detected.text());
            assertTrue(detected.text().startsWith("DETECTED " + c.rank + " dead=" + victim + " rank " + victim
                    + " failed"), detected.text());
            assertTrue(millis < DETECTION_LIMIT_MILLIS, "detected after " + millis + " ms");
            ChildJvm.Line closed = c.await("CLOSED ", 15);
            assertNotNull(closed);
            assertTrue(c.process.waitFor(15, TimeUnit.SECONDS), "rank " + c.rank + " exits after close()");
            assertEquals(0, c.process.exitValue());
        }
    }

    private static void signal(ChildJvm c, String sig) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + sig, Long.toString(c.process.pid())).start();
        assertTrue(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0, "kill -" + sig);
    }

    /**
     * A rank stopped with SIGSTOP is declared dead for its silence by every survivor, and when it resumes it names
     * itself (the root's verdict was waiting in its socket), not the root whose connection it finds closed.
     */
    @Test
    void aStoppedRankIsNamedByTheSurvivorsAndByItselfWhenItResumes() throws Exception {
        int victim = 2;
        List<ChildJvm> all = world("stopped:" + victim);
        for (ChildJvm c : all) {
            c.await("READY ", 60);
        }
        ChildJvm stopped = all.get(victim);
        signal(stopped, "STOP");
        try {
            for (ChildJvm c : all) {
                if (c.rank != victim) {
                    String line = c.await("DETECTED ", 20).text();
                    assertTrue(line.startsWith("DETECTED " + c.rank + " dead=" + victim + " rank " + victim
                            + " failed") && line.contains("silent for"), line);
                }
            }
            Thread.sleep(500); // the root's verdict reaches the stopped rank's socket
        } finally {
            signal(stopped, "CONT");
        }
        String own = stopped.await("DETECTED ", 20).text();
        assertTrue(own.startsWith("DETECTED " + victim + " dead=" + victim) && own.contains("declared this rank dead"),
                own);
        stopped.await("CLOSED ", 15);
    }

    /**
     * A rank stopped while the root sends it a 24 MiB all-gather result (more than the socket buffers hold) freezes
     * no one: the others are told it is dead and close within seconds, and once resumed it names itself.
     */
    @Test
    void aRankStoppedDuringALargeAllGatherFreezesNoOne() throws Exception {
        int victim = 2;
        List<ChildJvm> all = world("stoppedGather:" + victim);
        for (ChildJvm c : all) {
            c.await("READY ", 60);
        }
        ChildJvm stopped = all.get(victim);
        stopped.await("GATHERING ", 30);
        Thread.sleep(200); // its part is sent; the others enter 1.5 s after READY
        signal(stopped, "STOP");
        try {
            for (ChildJvm c : all) {
                if (c.rank != victim) {
                    String line = c.await("DETECTED ", 20).text();
                    assertTrue(line.startsWith("DETECTED " + c.rank + " dead=" + victim + " rank " + victim
                            + " failed"), line);
                    c.await("CLOSED ", 15);
                }
            }
        } finally {
            signal(stopped, "CONT");
        }
        // the verdict cannot pass the full connection: the rank sees it closed and knows it was paused meanwhile
        String own = stopped.await("DETECTED ", 30).text();
        assertTrue(own.startsWith("DETECTED " + victim + " dead=" + victim) && (own.contains("the root dropped it")
                || own.contains("declared this rank dead")), own);
    }
}
