package io.gda4j.ptx;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The committed PTX is what regen-ptx.sh makes from kernels/*.cu today, and ptxas assembles it for sm_90. Needs
 * nvcc 13.0 (the compiler that generated it; another version writes different PTX) and ptxas; skipped otherwise.
 */
class PtxFreshnessTest {
    static final String NVCC_RELEASE = "release 13.0";

    @Test
    void everyKernelSourceHasCommittedPtx() throws IOException {
        List<String> sources;
        try (Stream<Path> s = Files.list(Path.of("kernels"))) {
            sources = s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".cu")).sorted().toList();
        }
        assertFalse(sources.isEmpty(), "no kernels/*.cu");
        for (String cu : sources) {
            Path ptx = Path.of("src", "main", "resources", "io", "gda4j", "ptx", cu.replace(".cu", ".ptx"));
            assertTrue(Files.isRegularFile(ptx), ptx + " is missing: run device-ptx/regen-ptx.sh");
            String text = Files.readString(ptx, StandardCharsets.UTF_8);
            assertTrue(text.contains(".target sm_90"), ptx + " is not built for sm_90");
        }
    }

    @Test
    @Timeout(330) // nvcc over every kernels/*.cu: about 45 s alone on 2 cores, past the suite's 120 s under load
    void committedPtxIsCurrentAndAssembles() throws IOException, InterruptedException {
        String version = run(List.of("nvcc", "--version"));
        assumeTrue(version != null, "nvcc is not installed: cannot regenerate the PTX to compare");
        assumeTrue(version.contains(NVCC_RELEASE), "nvcc is not CUDA 13.0 (the PTX was generated with it): " + version.trim());
        assumeTrue(run(List.of("ptxas", "--version")) != null, "ptxas is not installed");
        Process p = new ProcessBuilder("bash", "regen-ptx.sh", "--check").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(300, TimeUnit.SECONDS), "regen-ptx.sh --check did not finish in 300 s");
        assertEquals(0, p.exitValue(), out);
    }

    /** Output of a command, or null when it cannot be started or fails. */
    static String run(List<String> cmd) throws InterruptedException {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            return p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0 ? out : null;
        } catch (IOException e) {
            return null;
        }
    }
}
