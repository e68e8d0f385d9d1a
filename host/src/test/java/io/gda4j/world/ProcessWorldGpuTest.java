package io.gda4j.world;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.bootstrap.LaunchEnvironment;
import io.gda4j.cuda.Cuda;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A world of child JVMs, one rank each, started the way a launcher starts them ({@code GDA4J_RANK},
 * {@code GDA4J_WORLD_SIZE}, {@code GDA4J_ROOT}): heaps mapped across processes by CUDA IPC, put and signals byte-exact
 * over p2p, and a peer killed with SIGKILL during a wait ending the survivor's kernel with a {@link RankDiedException}.
 * Two processes share GPU 0 (time-sliced: no MPS); where two GPUs are visible, a second run puts them on 0 and 1.
 */
@Tag("gpu")
@Timeout(180)
class ProcessWorldGpuTest {
    private static final long DETECTION_LIMIT_MILLIS = 10_000;
    private final List<Child> children = new ArrayList<>();

    @BeforeEach
    void needGpu() {
        GpuWorlds.assumeGpu();
    }

    @AfterEach
    void killLeftovers() {
        for (Child c : children) {
            c.process.destroyForcibly();
        }
    }

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
            }, "rank-" + rank + "-stdout");
            t.setDaemon(true);
            t.start();
        }

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
                if (l.text().startsWith("FAILED") || l.text().startsWith("BAD") || l.text().startsWith("ERROR")) {
                    throw new AssertionError("rank " + rank + ": " + l.text() + "\n" + transcript);
                }
            }
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private List<Child> world(int size, String gpus, String mode, long waitTimeoutMillis) throws IOException {
        int port = freePort();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Child> all = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            ProcessBuilder pb = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-Xmx256m",
                    "-cp", System.getProperty("java.class.path"), ProcessWorldChild.class.getName(), mode);
            Map<String, String> env = pb.environment();
            for (String launcherVar : List.of("RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID")) {
                env.remove(launcherVar);
            }
            env.put(LaunchEnvironment.GDA4J_RANK, Integer.toString(r));
            env.put(LaunchEnvironment.GDA4J_WORLD_SIZE, Integer.toString(size));
            env.put(LaunchEnvironment.GDA4J_ROOT, "127.0.0.1:" + port);
            env.put(LaunchEnvironment.GDA4J_JOB_TOKEN, "process-world-test-" + port);
            env.put(WorldConfig.HEAP_SIZE_ENV, "4MiB");
            env.put(WorldConfig.TRANSPORT_ENV, "auto");
            env.put(WorldConfig.WAIT_TIMEOUT_ENV, Long.toString(waitTimeoutMillis));
            if (gpus == null) {
                env.remove(WorldConfig.GPUS_ENV);
            } else {
                env.put(WorldConfig.GPUS_ENV, gpus);
            }
            pb.redirectErrorStream(true);
            Child c = new Child(r, pb.start());
            children.add(c);
            all.add(c);
        }
        return all;
    }

    private void exchange(int size, String gpus) throws Exception {
        List<Child> all = world(size, gpus, "exchange", 30_000);
        for (Child c : all) {
            c.await("OK " + c.rank, 120);
        }
        for (Child c : all) {
            c.await("CLOSED", 60);
            assertTrue(c.process.waitFor(30, TimeUnit.SECONDS), "rank " + c.rank + " exits after close()");
            assertEquals(0, c.process.exitValue());
        }
    }

    @Test
    void twoProcessesOnOneGpuPutAndSignalByteExactOverIpcHeaps() throws Exception {
        exchange(2, "0,0");
    }

    @Test
    void threeProcessesOnOneGpuAddToEveryPeersCounterExactly() throws Exception {
        exchange(3, "0,0,0");
    }

    @Test
    void twoProcessesOnTwoGpusPutAndSignalByteExact() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Cuda.deviceCount() >= 2,
                "needs two GPUs: this machine has " + Cuda.deviceCount());
        exchange(2, null);
    }

    @Test
    void aPeerKilledDuringAWaitEndsTheSurvivorsKernelNamingIt() throws Exception {
        // The wait's own timeout is a minute: only the abort raised on the bootstrap's report can end it in time.
        List<Child> all = world(2, "0,0", "survive:0", 60_000);
        for (Child c : all) {
            c.await("READY ", 120);
        }
        Thread.sleep(500); // the survivor's wait kernel is spinning by now
        long killedAt = System.nanoTime();
        all.get(0).process.destroyForcibly();
        Line died = all.get(1).await("DIED 1 ", 60);
        long millis = TimeUnit.NANOSECONDS.toMillis(died.arrivedNanos() - killedAt);
        System.out.println("rank 1 saw the SIGKILL of rank 0 end its GPU wait after " + millis + " ms: " + died.text());
        assertTrue(died.text().startsWith("DIED 1 0 "), died.text());
        assertTrue(millis < DETECTION_LIMIT_MILLIS, "detected after " + millis + " ms");
        all.get(1).await("CLOSED", 60);
        assertTrue(all.get(1).process.waitFor(30, TimeUnit.SECONDS), "the survivor's close() completes");
        assertEquals(0, all.get(1).process.exitValue());
    }
}
