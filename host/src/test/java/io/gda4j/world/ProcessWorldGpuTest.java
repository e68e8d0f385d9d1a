package io.gda4j.world;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.bootstrap.ChildJvm;
import io.gda4j.bootstrap.LaunchEnvironment;
import io.gda4j.cuda.Cuda;
import io.gda4j.transport.Transports;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
 * The same over ibgda with the emulated NIC, with NIC atomics from several processes on one counter.
 * Two processes share GPU 0 (time-sliced: no MPS); where two GPUs are visible, a second run puts them on 0 and 1.
 */
@Tag("gpu")
@Timeout(180)
class ProcessWorldGpuTest {
    private static final long DETECTION_LIMIT_MILLIS = 10_000;
    private final List<ChildJvm> children = new ArrayList<>();

    @BeforeEach
    void needGpu() {
        GpuWorlds.assumeGpu();
    }

    @AfterEach
    void killLeftovers() {
        for (ChildJvm c : children) {
            c.process.destroyForcibly();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private List<ChildJvm> world(int size, String gpus, String mode, long waitTimeoutMillis) throws IOException {
        return world(size, gpus, mode, waitTimeoutMillis, Map.of(Transports.TRANSPORT_ENV, "auto"));
    }

    private List<ChildJvm> world(int size, String gpus, String mode, long waitTimeoutMillis,
                                 Map<String, String> settings) throws IOException {
        int port = freePort();
        List<ChildJvm> all = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            Map<String, String> env = new HashMap<>();
            for (String launcherVar : List.of("RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID")) {
                env.put(launcherVar, null);
            }
            env.put(LaunchEnvironment.GDA4J_RANK, Integer.toString(r));
            env.put(LaunchEnvironment.GDA4J_WORLD_SIZE, Integer.toString(size));
            env.put(LaunchEnvironment.GDA4J_ROOT, "127.0.0.1:" + port);
            env.put(LaunchEnvironment.GDA4J_JOB_TOKEN, "process-world-test-" + port);
            env.put(WorldConfig.HEAP_SIZE_ENV, "4MiB");
            env.putAll(settings);
            env.put(WorldConfig.WAIT_TIMEOUT_ENV, Long.toString(waitTimeoutMillis));
            env.put(WorldConfig.GPUS_ENV, gpus);
            ChildJvm c = ChildJvm.start(r, "256m", ProcessWorldChild.class.getName(), List.of(mode), env,
                    List.of("FAILED", "BAD", "ERROR"));
            children.add(c);
            all.add(c);
        }
        return all;
    }

    /** Every rank closes its world and exits 0. */
    private static void closeAll(List<ChildJvm> all) throws Exception {
        for (ChildJvm c : all) {
            c.await("CLOSED", 60);
            assertTrue(c.process.waitFor(30, TimeUnit.SECONDS), "rank " + c.rank + " exits after close()");
            assertEquals(0, c.process.exitValue());
        }
    }

    private void exchange(int size, String gpus) throws Exception {
        List<ChildJvm> all = world(size, gpus, "exchange", 30_000);
        for (ChildJvm c : all) {
            c.await("OK " + c.rank, 120);
        }
        closeAll(all);
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

    /**
     * ibgda over the emulated NIC between processes: each process's engine executes its WQEs on the peer's heap
     * mapped by CUDA IPC. put_signal is byte-exact, and NIC atomics from every process, the counter's owner included,
     * keep an exact sum (strict split atomics under the owner's lock line: without it two engines lose updates).
     */
    private void overIbgda(int size, String gpus) throws Exception {
        List<ChildJvm> all = world(size, gpus, "ibgda", 60_000, Map.of(Transports.TRANSPORT_ENV, "ibgda",
                io.gda4j.nic.NicConfig.NIC_ENV, "emulated"));
        for (ChildJvm c : all) {
            c.await("OK " + c.rank, 120);
        }
        all.get(0).await("COUNTED 0", 120);
        closeAll(all);
    }

    @Test
    void twoProcessesOnOneGpuPutAndSignalByteExactOverIbgdaWithTheEmulatedNic() throws Exception {
        overIbgda(2, "0,0");
    }

    @Test
    void threeProcessesOnOneGpuAddToOneCounterExactlyWithEmulatedNicAtomics() throws Exception {
        overIbgda(3, "0,0,0");
    }

    @Test
    void twoProcessesOnTwoGpusOverIbgdaWithTheEmulatedNic() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Cuda.deviceCount() >= 2,
                "needs two GPUs: this machine has " + Cuda.deviceCount());
        overIbgda(2, null);
    }

    @Test
    void aPeerKilledDuringAWaitEndsTheSurvivorsKernelNamingIt() throws Exception {
        // The wait's own timeout is a minute: only the abort raised on the bootstrap's report can end it in time.
        List<ChildJvm> all = world(2, "0,0", "survive:0", 60_000);
        for (ChildJvm c : all) {
            c.await("READY ", 120);
        }
        Thread.sleep(500); // the survivor's wait kernel is spinning by now
        long killedAt = System.nanoTime();
        all.get(0).process.destroyForcibly();
        ChildJvm.Line died = all.get(1).await("DIED 1 ", 60);
        long millis = TimeUnit.NANOSECONDS.toMillis(died.arrivedNanos() - killedAt);
        System.out.println("rank 1 saw the SIGKILL of rank 0 end its GPU wait after " + millis + " ms: " + died.text());
        assertTrue(died.text().startsWith("DIED 1 0 "), died.text());
        assertTrue(millis < DETECTION_LIMIT_MILLIS, "detected after " + millis + " ms");
        all.get(1).await("CLOSED", 60);
        assertTrue(all.get(1).process.waitFor(30, TimeUnit.SECONDS), "the survivor's close() completes");
        assertEquals(0, all.get(1).process.exitValue());
    }

    @Test
    void anAbortInOneProcessStopsTheOthersGpuWaitsAtOnceAndTheWorldRunsAgain() throws Exception {
        // A minute of wait timeout: only the announced abort can end the waits in time.
        List<ChildJvm> all = world(3, "0,0,0", "abort:1", 60_000);
        for (ChildJvm c : all) {
            c.await("READY ", 120);
        }
        for (int r : new int[] {0, 2}) {
            ChildJvm.Line stopped = all.get(r).await("STOPPED " + r + " ", 60);
            String[] parts = stopped.text().split(" ", 4);
            long millis = Long.parseLong(parts[2]);
            System.out.println("rank " + r + "'s GPU wait ended " + millis + " ms after it began: " + parts[3]);
            assertTrue(millis < 10_000, "stopped after " + millis + " ms");
            assertTrue(parts[3].contains("rank 1 (pid") && parts[3].contains("World.abort() was called"), parts[3]);
        }
        for (ChildJvm c : all) {
            c.await("AGAIN " + c.rank, 60);
            c.await("CLOSED", 60);
            assertTrue(c.process.waitFor(30, TimeUnit.SECONDS), "rank " + c.rank + " exits");
            assertEquals(0, c.process.exitValue());
        }
    }
}
