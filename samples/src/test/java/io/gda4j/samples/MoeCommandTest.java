package io.gda4j.samples;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MoeCommandTest {
    @Test
    void tokenListsAndRanges() {
        assertEquals(List.of(128, 256, 512, 1024, 2048, 4096, 8192), MoeCommand.tokenList("128:8192"));
        assertEquals(List.of(4096, 100), MoeCommand.tokenList("4096, 100"));
        assertThrows(UsageException.class, () -> MoeCommand.tokenList("0"));
        assertThrows(UsageException.class, () -> MoeCommand.tokenList("8:4"));
        assertThrows(UsageException.class, () -> MoeCommand.tokenList("many"));
    }

    @Test
    void percentiles() {
        double[] v = {5, 1, 4, 2, 3};
        assertEquals(3, MoeCommand.percentile(v, 0.5));
        assertEquals(5, MoeCommand.percentile(v, 0.99));
    }

    @Test
    void theNcclColumnSaysWhyInAFewWords() {
        assertEquals("NCCL not found", MoeCommand.ncclColumn("NCCL not found (tried libnccl.so.2: cannot open); set X"));
        assertEquals("NCCL needs one GPU per rank",
                MoeCommand.ncclColumn("NCCL needs one GPU per rank: ranks 0 and 1 share GPU 0"));
    }

    @Test
    void helpTeachesTheBandwidthDefinition() {
        CliRun r = CliRun.of("moe", "--help");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("DeepEP's"), r.out());
        assertTrue(r.out().contains("--tokens"), r.out());
        assertTrue(r.out().contains("GDA4J_NCCL_LIBRARY"), r.out());
    }

    @Test
    void badOptionsAreUsageErrors() {
        assertEquals(2, CliRun.of("moe", "--dtype", "fp16").code());
        assertEquals(2, CliRun.of("moe", "--topk", "0").code());
    }

    @Test
    void lowLatencyModeIsDocumentedAndItsOptionsCheckedBeforeAnyGpuWork() {
        CliRun help = CliRun.of("moe", "--help");
        assertTrue(help.out().contains("--mode low-latency"), help.out());
        assertTrue(help.out().contains("UE8M0"), help.out());
        CliRun mode = CliRun.of("moe", "--mode", "fast");
        assertEquals(2, mode.code());
        assertTrue(mode.err().contains("high-throughput or low-latency"), mode.err());
        CliRun hidden = CliRun.of("moe", "--mode", "low-latency", "--hidden", "100");
        assertEquals(2, hidden.code());
        assertTrue(hidden.err().contains("multiple of 128"), hidden.err());
        CliRun pow2 = CliRun.of("moe", "--mode", "low-latency", "--dtype", "bf16", "--pow2-scales");
        assertEquals(2, pow2.code());
        assertTrue(pow2.err().contains("--pow2-scales applies to FP8"), pow2.err());
        assertEquals(2, CliRun.of("moe", "--mode", "low-latency", "--dtype", "fp16").code());
        assertEquals(2, CliRun.of("moe", "--mode", "low-latency", "--topk", "33").code());
    }

    @Test
    void theCommunicationStreamOptionIsDocumentedAndRefusedInLowLatencyMode() {
        CliRun help = CliRun.of("moe", "--help");
        assertTrue(help.out().contains("--comm-stream"), help.out());
        assertTrue(help.out().contains("communication stream per rank"), help.out());
        assertTrue(help.out().replaceAll("\\s+", " ").contains("the times then include that fork and join"), help.out());
        CliRun ll = CliRun.of("moe", "--mode", "low-latency", "--comm-stream");
        assertEquals(2, ll.code());
        assertTrue(ll.err().contains("--comm-stream applies to --mode high-throughput"), ll.err());
    }
}
