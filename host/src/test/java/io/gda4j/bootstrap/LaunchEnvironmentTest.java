package io.gda4j.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

class LaunchEnvironmentTest {

    private static Map<String, String> env(String... kv) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }

    private static String refusal(Map<String, String> env) {
        return assertThrows(BootstrapException.class, () -> LaunchEnvironment.parse(env)).getMessage();
    }

    @Test
    void torchrunTakesTheMasterPortPlusOneBecauseTheAgentStoreOwnsMasterPort() {
        LaunchEnvironment e = LaunchEnvironment.parse(env("RANK", "3", "WORLD_SIZE", "8", "LOCAL_RANK", "1",
                "LOCAL_WORLD_SIZE", "4", "MASTER_ADDR", "node7", "MASTER_PORT", "29500",
                "TORCHELASTIC_RUN_ID", "abc"));
        assertEquals(new LaunchEnvironment(3, 8, 1, 4, e.root(), "torchrun:abc", Launcher.TORCHRUN), e);
        assertEquals("node7", e.root().getHostString());
        assertEquals(29501, e.root().getPort());
    }

    @Test
    void openMpiNeedsARootFromGda4jRootOrMaster() {
        Map<String, String> m = env("OMPI_COMM_WORLD_RANK", "1", "OMPI_COMM_WORLD_SIZE", "2",
                "OMPI_COMM_WORLD_LOCAL_RANK", "1", "OMPI_COMM_WORLD_LOCAL_SIZE", "2",
                "OMPI_MCA_orte_ess_jobid", "12345");
        String why = refusal(m);
        assertTrue(why.contains("GDA4J_ROOT") && why.contains("MASTER_ADDR"), why);
        m.put("GDA4J_ROOT", "10.0.0.1:7000");
        LaunchEnvironment e = LaunchEnvironment.parse(m);
        assertEquals(Launcher.OPEN_MPI, e.launcher());
        assertEquals(1, e.rank());
        assertEquals(2, e.localWorldSize());
        assertEquals("ompi:12345", e.jobToken());
        assertEquals(7000, e.root().getPort());
        m.remove("GDA4J_ROOT");
        m.put("MASTER_ADDR", "h");
        m.put("MASTER_PORT", "6000");
        assertEquals(6000, LaunchEnvironment.parse(m).root().getPort()); // only torchrun shifts MASTER_PORT
        m.remove("OMPI_MCA_orte_ess_jobid");
        m.put("PMIX_NAMESPACE", "prterun-x-1@1");
        assertEquals("pmix:prterun-x-1@1", LaunchEnvironment.parse(m).jobToken());
    }

    @Test
    void slurmReadsTasksPerNodeListsAndTheJobId() {
        Map<String, String> m = env("SLURM_PROCID", "5", "SLURM_NTASKS", "7", "SLURM_LOCALID", "0",
                "SLURM_TASKS_PER_NODE", "3(x2),1", "SLURM_NODEID", "2", "SLURM_JOB_ID", "991",
                "SLURM_STEP_ID", "0", "GDA4J_ROOT", "[::1]:4000");
        LaunchEnvironment e = LaunchEnvironment.parse(m);
        assertEquals(Launcher.SLURM, e.launcher());
        assertEquals(1, e.localWorldSize());
        assertEquals("slurm:991.0", e.jobToken());
        assertEquals("::1", e.root().getHostString());
        m.put("SLURM_NODEID", "0");
        assertEquals(3, LaunchEnvironment.parse(m).localWorldSize());
        m.remove("SLURM_NODEID");
        assertTrue(refusal(m).contains("SLURM_NODEID"));
        m.put("SLURM_NTASKS_PER_NODE", "4");
        assertEquals(4, LaunchEnvironment.parse(m).localWorldSize());
        m.remove("SLURM_NTASKS_PER_NODE");
        m.put("SLURM_TASKS_PER_NODE", "2(x");
        assertTrue(refusal(m).contains("SLURM_TASKS_PER_NODE=2(x"));
    }

    @Test
    void explicitVariablesDefaultToOneHostAndNeedAToken() {
        Map<String, String> m = env("GDA4J_RANK", "2", "GDA4J_WORLD_SIZE", "4", "GDA4J_ROOT", "localhost:5000");
        assertTrue(refusal(m).contains("GDA4J_JOB_TOKEN"));
        m.put("GDA4J_JOB_TOKEN", "t1");
        LaunchEnvironment e = LaunchEnvironment.parse(m);
        assertEquals(new LaunchEnvironment(2, 4, 2, 4, e.root(), "t1", Launcher.EXPLICIT), e);
        m.put("GDA4J_LOCAL_RANK", "0");
        assertTrue(refusal(m).contains("GDA4J_LOCAL_WORLD_SIZE"));
        m.put("GDA4J_LOCAL_WORLD_SIZE", "2");
        assertEquals(2, LaunchEnvironment.parse(m).localWorldSize());
        m.put("GDA4J_ROOT", "localhost");
        assertTrue(refusal(m).contains("not host:port"));
        m.put("GDA4J_ROOT", "localhost:70000");
        assertTrue(refusal(m).contains("not a port"));
    }

    @Test
    void contradictoryOrIncompleteEnvironmentsAreRefusedNamingTheVariables() {
        String why = refusal(env("RANK", "4", "WORLD_SIZE", "4", "LOCAL_RANK", "0", "LOCAL_WORLD_SIZE", "4",
                "MASTER_ADDR", "h", "MASTER_PORT", "1", "GDA4J_JOB_TOKEN", "t"));
        assertTrue(why.contains("RANK") && why.contains("rank 4 is not in a world of 4"), why);
        why = refusal(env("RANK", "0", "WORLD_SIZE", "2", "MASTER_ADDR", "h", "MASTER_PORT", "1"));
        assertTrue(why.contains("LOCAL_RANK is not set"), why);
        why = refusal(env("GDA4J_RANK", "x", "GDA4J_WORLD_SIZE", "2"));
        assertTrue(why.contains("GDA4J_RANK=x"), why);
        why = refusal(env());
        assertTrue(why.contains("torchrun") && why.contains("GDA4J_RANK"), why);
    }

    @Test
    void twoLaunchersThatDisagreeAreRefusedUnlessOneIsChosen() {
        Map<String, String> m = env("RANK", "3", "WORLD_SIZE", "8", "LOCAL_RANK", "3", "LOCAL_WORLD_SIZE", "8",
                "MASTER_ADDR", "h", "MASTER_PORT", "29500", "TORCHELASTIC_RUN_ID", "r",
                "SLURM_PROCID", "0", "SLURM_NTASKS", "1", "SLURM_LOCALID", "0", "SLURM_NTASKS_PER_NODE", "1",
                "SLURM_JOB_ID", "5");
        String why = refusal(m);
        assertTrue(why.contains("RANK=3") && why.contains("SLURM_PROCID=0") && why.contains("GDA4J_LAUNCHER"), why);
        m.put("GDA4J_LAUNCHER", "torchrun");
        LaunchEnvironment e = LaunchEnvironment.parse(m);
        assertEquals(Launcher.TORCHRUN, e.launcher());
        assertEquals(3, e.rank());
        m.put("GDA4J_LAUNCHER", "mpi");
        assertTrue(refusal(m).contains("OMPI_COMM_WORLD_RANK"));
        m.put("GDA4J_LAUNCHER", "pbs");
        assertTrue(refusal(m).contains("not a launcher"));
        // agreeing launchers are fine: torchrun's own values are used
        m.remove("GDA4J_LAUNCHER");
        m.put("SLURM_PROCID", "3");
        m.put("SLURM_NTASKS", "8");
        assertEquals(Launcher.TORCHRUN, LaunchEnvironment.parse(m).launcher());
    }

    @Test
    void aGuessableTokenGetsAOneLineWarningSayingHowToSetAStrongOne() {
        for (String weak : List.of("torchrun:none", "slurm:123456.0", "ompi:98765", "job-42",
                "pmix:prterun-node01-28391@1", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "abcabcabcabcabcabcabc",
                "0123456789abcdef0123456789abcdef", "abababababcdcdcdcdeeeeeeeeeeeeee")) {
            String w = LaunchEnvironment.guessableTokenWarning(weak);
            org.junit.jupiter.api.Assertions.assertNotNull(w, weak);
            assertTrue(w.contains(LaunchEnvironment.GDA4J_JOB_TOKEN + "=")
                    && !w.contains("\n"), w);
        }
        org.junit.jupiter.api.Assertions.assertNull(LaunchEnvironment.guessableTokenWarning(
                "torchrun:3f9c1e7a5b2d4c6e8f0a1b2c"));
        org.junit.jupiter.api.Assertions.assertNull(LaunchEnvironment.guessableTokenWarning(
                "9b1d2f7c4e6a8b0d1f3e5a7c9e1b3d5f"));
    }
}
