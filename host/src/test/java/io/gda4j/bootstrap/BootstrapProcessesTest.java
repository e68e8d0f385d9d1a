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

/**
 * Ranks as child JVMs on localhost: the bootstrap across real processes, SIGKILL and SIGSTOP detection, and a root
 * or member held to a small heap or a few descriptors.
 */
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

    /** What every rank printed, for a failure's message. */
    private static String transcripts(List<ChildJvm> all) {
        StringBuilder s = new StringBuilder();
        for (ChildJvm c : all) {
            s.append("\n--- rank ").append(c.rank).append(":\n").append(c.transcript());
        }
        return s.toString();
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
                            + " failed"), () -> line + transcripts(all));
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

    /**
     * The root stopped with SIGSTOP for longer than dead-after: its ranks declare it dead and close, and when it
     * resumes it names its own pause, not the ranks whose connections it finds closed.
     */
    @Test
    void aStoppedRootNamesItsOwnPauseWhenItResumes() throws Exception {
        List<ChildJvm> all = world("stopped:0");
        for (ChildJvm c : all) {
            c.await("READY ", 60);
        }
        ChildJvm root = all.get(0);
        signal(root, "STOP");
        try {
            for (ChildJvm c : all.subList(1, SIZE)) {
                String line = c.await("DETECTED ", 20).text();
                assertTrue(line.startsWith("DETECTED " + c.rank + " dead=0 rank 0 failed") && line.contains("silent"),
                        line);
            }
        } finally {
            signal(root, "CONT");
        }
        String own = root.await("DETECTED ", 20).text();
        assertTrue(own.startsWith("DETECTED 0 dead=0") && own.contains("this process was paused"), own);
        root.await("CLOSED ", 15);
    }

    /**
     * An honest all-gather of 6 x 8 MiB in a root of 160 MiB: the result is sent from the parts themselves, not from
     * a copy built in a growing buffer (which took 2-3 times the result and ran the root out of memory).
     */
    @Test
    void aLargeAllGatherFitsInARootOfModestHeap() throws Exception {
        int size = 6;
        int part = BootstrapChild.BIG_PART_BYTES;
        ChildJvm root = ChildJvm.start(0, "160m", BootstrapChild.class.getName(), List.of("0",
                Integer.toString(size), "0", "test-job", "bigGather"), Map.of(), List.of("ERROR", "Exception"));
        children.add(root);
        int port = Integer.parseInt(root.await("PORT ", 30).text().substring(5).strip());
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newCachedThreadPool();
        try {
            List<java.util.concurrent.Future<Void>> members = new ArrayList<>();
            for (int r = 1; r < size; r++) {
                int rank = r;
                members.add(pool.submit(() -> {
                    BootstrapConfig c = BootstrapConfig.of(rank, size, new java.net.InetSocketAddress("127.0.0.1",
                            port), "test-job").withTimeouts(30_000, 60_000).withMaxMessageBytes(part);
                    try (Bootstrap b = Bootstrap.join(c, PeerFailureListener.NONE)) {
                        byte[][] all = b.allGather(BootstrapChild.partOf(rank, part));
                        for (int q = 0; q < size; q++) {
                            org.junit.jupiter.api.Assertions.assertArrayEquals(BootstrapChild.partOf(q, part), all[q]);
                        }
                        b.barrier();
                    }
                    return null;
                }));
            }
            root.await("GATHERED ", 60);
            for (java.util.concurrent.Future<Void> f : members) {
                f.get(60, TimeUnit.SECONDS);
            }
            root.await("DONE ", 30);
        } finally {
            pool.shutdownNow();
        }
    }

    private static final int DESCRIPTOR_LIMIT = 128;

    /**
     * A root with a limit of 128 descriptors runs out of them under a flood of idle connections (accept fails with
     * EMFILE); once they close, it accepts again and the ranks join. One EMFILE used to end accepting for good.
     */
    @Test
    void aRootOutOfDescriptorsAcceptsAgainOnceTheyAreBack() throws Exception {
        int size = 3;
        ChildJvm root = ChildJvm.start(List.of("prlimit", "--nofile=" + DESCRIPTOR_LIMIT + ":" + DESCRIPTOR_LIMIT,
                "--"), 0, "64m", BootstrapChild.class.getName(), List.of("0", Integer.toString(size), "0", "test-job",
                "fdRoot"), Map.of(), List.of("ERROR", "Exception"));
        children.add(root);
        int port = Integer.parseInt(root.await("PORT ", 30).text().substring(5).strip());
        long open = Long.parseLong(root.await("FDS ", 30).text().substring(4).strip());
        List<java.net.Socket> flood = new ArrayList<>();
        try {
            for (long i = open; i < DESCRIPTOR_LIMIT + 32; i++) {
                flood.add(new java.net.Socket(java.net.InetAddress.getLoopbackAddress(), port));
            }
            Thread.sleep(500); // the root takes them until accept fails
        } finally {
            for (java.net.Socket s : flood) {
                s.close();
            }
        }
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newCachedThreadPool();
        try {
            List<java.util.concurrent.Future<Void>> members = new ArrayList<>();
            for (int r = 1; r < size; r++) {
                BootstrapConfig c = BootstrapConfig.of(r, size, new java.net.InetSocketAddress("127.0.0.1", port),
                        "test-job").withTimeouts(15_000, 15_000);
                members.add(pool.submit(() -> {
                    try (Bootstrap b = Bootstrap.join(c, PeerFailureListener.NONE)) {
                        b.barrier();
                    }
                    return null;
                }));
            }
            for (java.util.concurrent.Future<Void> f : members) {
                try {
                    f.get(30, TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException e) {
                    root.process.destroy(); // its last words, if any, come with the transcript
                    root.process.waitFor(10, TimeUnit.SECONDS);
                    throw new AssertionError("a rank did not join; the root said:\n" + root.transcript(), e);
                }
            }
            root.await("DONE ", 30);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * A member of 32 MiB is sent a result whose first part says 40 MiB (within its limit of 48 MiB): reading it runs
     * the member out of memory, which it names at once, instead of losing its reader to the error and waiting out
     * the dead-after.
     */
    @Test
    void aMemberOutOfMemoryForAFrameSaysSoAtOnce() throws Exception {
        try (java.net.ServerSocket server = new java.net.ServerSocket(0, 1,
                java.net.InetAddress.getLoopbackAddress())) {
            ChildJvm member = ChildJvm.start(1, "32m", BootstrapChild.class.getName(), List.of("1", "2",
                    Integer.toString(server.getLocalPort()), "test-job", "oomMember"), Map.of(), List.of("ERROR"));
            children.add(member);
            server.setSoTimeout(30_000);
            try (java.net.Socket s = server.accept()) {
                RawRank.Session root = RawRank.welcome(s, "test-job");
                while (root.read(1 << 20).type() != BootstrapFrameDescriptor.COLLECTIVE) {
                    // heartbeats
                }
                long sentAt = System.nanoTime();
                int partBytes = 40 << 20;
                // the frame's start: the rest never comes, the member must not need it to fail
                java.io.DataOutputStream out = new java.io.DataOutputStream(s.getOutputStream());
                out.writeInt(1 + 12 + 2 * 4 + partBytes + 1 + BootstrapFrameDescriptor.MAC_BYTES);
                out.writeByte(BootstrapFrameDescriptor.RESULT);
                out.writeLong(1);
                out.writeInt(2);
                out.writeInt(partBytes);
                out.flush();
                ChildJvm.Line failed = member.await("FAILED ", 30);
                long millis = TimeUnit.NANOSECONDS.toMillis(failed.arrivedNanos() - sentAt);
                assertTrue(failed.text().contains("ran out of memory"), failed.text());
                assertTrue(millis < 5_000, "named after " + millis + " ms");
                assertTrue(!member.transcript().contains("\tat "), "a stack trace:\n" + member.transcript());
            }
        }
    }
}
