package io.gda4j.samples;

import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.KernelArgs;
import io.gda4j.world.HeapBuffer;
import io.gda4j.world.LocalWorld;
import io.gda4j.world.Rank;
import io.gda4j.world.WorldConfig;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The payload check on a GPU: the fill and compare kernels find a changed word where it is, and the checked
 * ping-pong and bandwidth runs pass over every transport (two ranks on GPU 0 suffice: the check is about bytes, not
 * speed). PayloadCheckHostTest holds the same code to its bytes on the CPU.
 */
@Tag("gpu")
@Timeout(300)
class PayloadCheckGpuTest {
    @TempDir
    Path dir;

    private static void needGpu() {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
    }

    @Test
    void theCompareKernelFindsAChangedWordAtItsOffset() {
        needGpu();
        try (LocalWorld world = LocalWorld.create(WorldConfig.builder().gpus(List.of(0, 0)).heapSizeBytes(8L << 20)
                .waitTimeout(Duration.ofSeconds(10)).build())) {
            world.loadModules(PingPong.MODULE);
            Rank r = world.rank(0);
            long bytes = 65536 + 13; // whole words and a tail
            HeapBuffer buf = world.heap().allocate(bytes);
            long seed = PayloadCheckDescriptor.seed(3, 7, PayloadCheckDescriptor.ROLE_INITIATOR);
            launch(r, "gda4j_payload_fill", KernelArgs.create().pointer(r.deviceView()).i64(buf.offset()).i64(bytes)
                    .u64(seed));
            PayloadCheck.Result intact = verify(r, buf, bytes, seed, 5);
            assertEquals(0, intact.mismatches(), intact::toString);
            assertEquals(1, intact.rounds());
            r.writeHeapLong(buf.offset() + 4096, r.readHeapLong(buf.offset() + 4096) ^ 0x100);
            PayloadCheck.Result changed = verify(r, buf, bytes, seed, 5);
            assertEquals(1, changed.mismatches(), changed::toString);
            assertEquals(5, PayloadCheckDescriptor.roundOf(changed.first()));
            assertEquals(4096, PayloadCheckDescriptor.offsetOf(changed.first()));
            PayloadCheck.Result stale = verify(r, buf, bytes, PayloadCheckDescriptor.seed(3, 6,
                    PayloadCheckDescriptor.ROLE_INITIATOR), 9);
            assertEquals((bytes + 7) / 8, stale.mismatches(), "another round's payload differs in every word");
            assertEquals(0, PayloadCheckDescriptor.offsetOf(stale.first()));
        }
    }

    private static PayloadCheck.Result verify(Rank r, HeapBuffer buf, long bytes, long seed, long round) {
        PayloadCheck.reset(r.scratch());
        launch(r, "gda4j_payload_verify", KernelArgs.create().pointer(r.deviceView()).i64(buf.offset()).i64(bytes)
                .u64(seed).u64(round).pointer(r.scratch().pointer().plusBytes(PayloadCheckDescriptor.RECORD_OFFSET)));
        return PayloadCheck.Result.read(r.rank(), r.scratch());
    }

    private static void launch(Rank r, String kernel, KernelArgs args) {
        r.kernel(PingPong.MODULE, kernel).launch(2 * r.device().multiprocessorCount(), 512, 0, r.stream(), args);
        r.stream().synchronize();
    }

    @ParameterizedTest(name = "latency over {0}")
    @ValueSource(strings = {"p2p", "proxy", "ibgda"})
    void theCheckedPingPongPassesEveryScopeAndSize(String transport) {
        needGpu();
        for (String check : new String[] {"--check", "--no-check"}) {
            CliRun r = CliRun.of("latency", "--gpus", "0,0", "--transport", transport, "--nic", "emulated", "--mode",
                    "put_signal", "--scopes", "thread,warp,block", "--sizes", "1,13,8,4k,1m", "--iters", "300",
                    "--warmup", "30", "--csv", "--quiet", check);
            assertEquals(0, r.code(), r::toString);
            assertTrue(r.out().contains("# check: " + (check.equals("--check") ? "on" : "off")), r.out());
        }
    }

    @ParameterizedTest(name = "bandwidth over {0}")
    @ValueSource(strings = {"p2p", "proxy", "ibgda"})
    void theCheckedBandwidthRunPasses(String transport) {
        needGpu();
        CliRun r = CliRun.of("bandwidth", "--gpus", "0,0", "--transport", transport, "--nic", "emulated", "--sizes",
                "16,4k,1m,16m", "--reps", "3", "--iters", "20", "--csv", "--quiet", "--bidir");
        assertEquals(0, r.code(), r::toString);
        assertTrue(r.out().contains("# check: on"), r.out());
        assertTrue(r.out().contains(",bidir_GBps"), r.out());
    }

    /** A real compare run, its CSV read back: the ratios it printed are the ones --from prints, to the last digit. */
    @Test
    void aCompareRunReadsBackToTheLastDigit() throws Exception {
        needGpu();
        CliRun run = CliRun.of("compare", "--gpus", "0,0", "--transports", "p2p,proxy", "--sizes", "8,64k", "--iters",
                "100", "--warmup", "10", "--reps", "2", "--csv", "--quiet");
        assertEquals(0, run.code(), run::toString);
        Path csv = dir.resolve("compare.csv");
        Files.writeString(csv, run.out());
        CliRun again = CliRun.of("compare", "--from", csv.toString(), "--csv");
        assertEquals(0, again.code(), again::toString);
        assertEquals(run.out(), again.out());
    }
}
