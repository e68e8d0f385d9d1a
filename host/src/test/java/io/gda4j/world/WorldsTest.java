package io.gda4j.world;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.bootstrap.BootstrapException;
import io.gda4j.bootstrap.LaunchEnvironment;
import io.gda4j.bootstrap.Launcher;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

/**
 * The entry point's choice between a local and a process world, a process's GPU, and what a dead peer does to the
 * world's failure state: everything of the multi-process world that needs no GPU.
 */
class WorldsTest {
    static Map<String, String> torchrun(int rank, int size, int localRank, int localSize) {
        return Map.of("RANK", "" + rank, "WORLD_SIZE", "" + size, "LOCAL_RANK", "" + localRank, "LOCAL_WORLD_SIZE",
                "" + localSize, "MASTER_ADDR", "127.0.0.1", "MASTER_PORT", "29500", "TORCHELASTIC_RUN_ID", "run-1");
    }

    @Test
    void aProcessStartedAloneDrivesALocalWorld() {
        assertTrue(Worlds.launchOf(Map.of()).isEmpty());
        assertTrue(Worlds.launchOf(Map.of("SLURM_NTASKS", "4", "SLURM_JOB_ID", "77")).isEmpty(),
                "a shell inside salloc is not a task of a step");
        assertTrue(Worlds.launchOf(torchrun(0, 1, 0, 1)).isEmpty(), "the only process of a launch drives its GPUs");
    }

    @Test
    void aProcessOfSeveralJoinsAProcessWorld() {
        LaunchEnvironment env = Worlds.launchOf(torchrun(1, 2, 1, 2)).orElseThrow();
        assertEquals(1, env.rank());
        assertEquals(Launcher.TORCHRUN, env.launcher());
        LaunchEnvironment mpi = Worlds.launchOf(Map.of("OMPI_COMM_WORLD_RANK", "3", "OMPI_COMM_WORLD_SIZE", "4",
                "OMPI_COMM_WORLD_LOCAL_RANK", "3", "OMPI_COMM_WORLD_LOCAL_SIZE", "4", "GDA4J_ROOT", "node1:7000",
                "GDA4J_JOB_TOKEN", "t")).orElseThrow();
        assertEquals(Launcher.OPEN_MPI, mpi.launcher());
    }

    @Test
    void anIncompleteLaunchIsRefusedNeverTakenForALocalWorld() {
        BootstrapException e = assertThrows(BootstrapException.class,
                () -> Worlds.launchOf(Map.of("RANK", "1", "WORLD_SIZE", "2")));
        assertTrue(e.getMessage().contains("LOCAL_RANK"), e.getMessage());
        assertThrows(BootstrapException.class, () -> Worlds.launchOf(Map.of("GDA4J_LAUNCHER", "torchrun")));
    }

    static LaunchEnvironment launch(int localRank, int localSize) {
        return new LaunchEnvironment(localRank, localSize, localRank, localSize,
                InetSocketAddress.createUnresolved("127.0.0.1", 1), "t", Launcher.EXPLICIT);
    }

    @Test
    void eachProcessTakesTheGpuOfItsLocalRankOrTheListedOne() {
        WorldConfig none = WorldConfig.builder().build();
        assertEquals(1, ProcessWorld.gpuOf(none, launch(1, 2), 2));
        assertEquals(0, ProcessWorld.gpuOf(none, launch(1, 2), 1),
                "a process that sees one GPU (its own CUDA_VISIBLE_DEVICES) uses it");
        WorldSetupException many = assertThrows(WorldSetupException.class,
                () -> ProcessWorld.gpuOf(none, launch(2, 3), 2));
        assertTrue(many.getMessage().contains("GDA4J_GPUS") && many.getMessage().contains("0,0"), many.getMessage());
        WorldConfig shared = WorldConfig.builder().gpus(List.of(0, 0)).build();
        assertEquals(0, ProcessWorld.gpuOf(shared, launch(1, 2), 4));
        WorldSetupException count = assertThrows(WorldSetupException.class,
                () -> ProcessWorld.gpuOf(shared, launch(1, 3), 4));
        assertTrue(count.getMessage().contains("lists 2 GPUs but 3 processes"), count.getMessage());
        WorldSetupException hidden = assertThrows(WorldSetupException.class,
                () -> ProcessWorld.gpuOf(WorldConfig.builder().gpus(List.of(0, 3)).build(), launch(1, 2), 2));
        assertTrue(hidden.getMessage().contains("needs GPU 3"), hidden.getMessage());
    }

    @Test
    void aDeadPeerRaisesTheAbortFlagsEveryTimeAndTheFirstIsKept() {
        AtomicInteger raised = new AtomicInteger();
        PeerFailures f = new PeerFailures(raised::incrementAndGet);
        assertEquals(null, f.first());
        f.onPeerFailure(2, "connection lost");
        f.onPeerFailure(1, "silent for 3000 ms");
        assertEquals(2, f.first().rank());
        assertEquals("connection lost", f.first().why());
        assertEquals(2, raised.get(), "each report raises the flags again (a cleared flag must not hide a death)");
    }

    @Test
    void afterStopADeathIsRememberedButRaisesNoAbortFlag() {
        // A world stops the listener before it frees the abort words: the bootstrap may report a death until it is
        // closed itself, and raising a freed word would store into unmapped pinned memory.
        AtomicInteger raised = new AtomicInteger();
        PeerFailures f = new PeerFailures(raised::incrementAndGet);
        f.onPeerFailure(2, "connection lost");
        f.stop();
        f.onPeerFailure(3, "connection lost");
        assertEquals(1, raised.get());
        assertEquals(2, f.first().rank());
    }

    @Test
    void theBootstrapsListenerRunsOnItsWatcherThreadWithoutBlocking() throws Exception {
        List<String> threads = new ArrayList<>();
        PeerFailures f = new PeerFailures(() -> threads.add(Thread.currentThread().getName()));
        Thread watcher = new Thread(() -> f.onPeerFailure(0, "gone"), "watcher");
        watcher.start();
        watcher.join(5_000);
        assertFalse(watcher.isAlive());
        assertEquals(List.of("watcher"), threads);
    }

    @Test
    void withoutAGpuAProcessWorldIsRefusedBeforeItJoinsTheBootstrap() {
        org.junit.jupiter.api.Assumptions.assumeFalse(io.gda4j.cuda.Cuda.status().available(),
                "this machine has a GPU: the refusal is for machines without one");
        // Port 1 is never listened on here: an attempt to join would fail differently (or hang until its timeout).
        Map<String, String> env = Map.of("GDA4J_RANK", "1", "GDA4J_WORLD_SIZE", "2", "GDA4J_ROOT", "127.0.0.1:1",
                "GDA4J_JOB_TOKEN", "t");
        WorldSetupException e = assertThrows(WorldSetupException.class,
                () -> Worlds.create(WorldConfig.builder().build(), env));
        assertTrue(e.getMessage().contains("needs a CUDA GPU"), e.getMessage());
    }

    @Test
    void anAbortAnnouncedByALivePeerRaisesTheFlagsAndIsForgottenWhenErrorsAreCleared() {
        AtomicInteger raised = new AtomicInteger();
        PeerFailures f = new PeerFailures(raised::incrementAndGet);
        f.onPeerAbort(1, "rank 1: its kernels stopped: timeout");
        f.onPeerAbort(2, "World.abort() was called");
        assertEquals(1, f.firstAbort().rank());
        assertEquals(null, f.first(), "an abort is not a death");
        assertEquals(2, raised.get());
        f.clearAborts();
        assertEquals(null, f.firstAbort());
        f.stop();
        f.onPeerAbort(3, "late");
        assertEquals(2, raised.get(), "no flag is raised once the world frees them");
    }
}
