package io.gda4j.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.bootstrap.Launcher;

import java.util.List;
import java.util.Map;

import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.DefaultParser;
import org.apache.commons.cli.ParseException;
import org.junit.jupiter.api.Test;

/** The benchmark options of a process that a launcher started: one rank of a world of processes. */
class WorldOptionsLaunchTest {
    static final Map<String, String> TORCHRUN_RANK1 = Map.of("RANK", "1", "WORLD_SIZE", "2", "LOCAL_RANK", "1",
            "LOCAL_WORLD_SIZE", "2", "MASTER_ADDR", "127.0.0.1", "MASTER_PORT", "29500", "TORCHELASTIC_RUN_ID", "r");

    static CommandLine latency(String... args) throws ParseException {
        return new DefaultParser().parse(new LatencyCommand().options(), args);
    }

    @Test
    void aLaunchedProcessIsOneRankOfTheLaunchersWorld() throws Exception {
        WorldOptions w = WorldOptions.parse(latency(), TORCHRUN_RANK1);
        assertNotNull(w.launch);
        assertEquals(Launcher.TORCHRUN, w.launch.launcher());
        assertEquals(List.of(), w.gpus, "each process takes its local rank's GPU");
        assertEquals(0, w.rank);
        assertEquals(1, w.peer);
        assertEquals(List.of(0, 0), WorldOptions.parse(latency("--gpus", "0,0"), TORCHRUN_RANK1).gpus);
        assertNull(WorldOptions.parse(latency(), Map.of()).launch, "alone: a local world");
    }

    @Test
    void ranksBeyondTheLaunchedWorldAreUsageErrors() {
        UsageException e = assertThrows(UsageException.class,
                () -> WorldOptions.parse(latency("--peer", "2"), TORCHRUN_RANK1));
        assertTrue(e.getMessage().contains("the launcher started 2 processes"), e.getMessage());
    }

    @Test
    void anIncompleteLaunchIsAUsageErrorNamingTheVariable() {
        UsageException e = assertThrows(UsageException.class,
                () -> WorldOptions.parse(latency(), Map.of("RANK", "0", "WORLD_SIZE", "2")));
        assertTrue(e.getMessage().contains("LOCAL_RANK"), e.getMessage());
    }

    @Test
    void aLaunchedCompareDefaultsToTheTransportsThatConnectProcesses() {
        String across = WorldOptions.transportNamesAcrossProcesses(io.gda4j.config.Settings.ofProcess());
        assertTrue(across.startsWith("p2p") && across.contains("proxy"), across);
        io.gda4j.nic.NicSelection nic = io.gda4j.nic.NicConfig.selection(io.gda4j.config.Settings.ofProcess());
        assertEquals(nic.found() && nic.provider().name().equals(io.gda4j.nic.Nic.EMULATED), across.contains("ibgda"),
                "ibgda connects processes only over the emulated NIC (" + nic.reason() + "): " + across);
    }

    @Test
    void gda4jMoeUnderALauncherSizesItsBuffersForTheLaunchedWorld() throws Exception {
        // A launched moe process lists no GPUs of its own: the world size comes from the launcher.
        WorldOptions w = WorldOptions.parse(new DefaultParser().parse(new MoeCommand().options(), new String[0]),
                TORCHRUN_RANK1);
        assertEquals(2, w.worldSize());
        WorldOptions alone = WorldOptions.parse(new DefaultParser().parse(new MoeCommand().options(),
                new String[] {"--gpus", "0,0,0"}), Map.of());
        assertEquals(3, alone.worldSize());
    }
}
