package io.gda4j.nic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code samples/scripts/connectx-report.sh} on a machine without a ConnectX (every machine here): it refuses at
 * once, names each missing piece, and runs nothing (no build, no test, no report file). Each run has a time limit.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ConnectxReportScriptTest {
    static final long RUN_LIMIT_SECONDS = 60;
    static Path script;

    @TempDir
    Path workDir;

    record Result(int exitCode, String output) {
    }

    @BeforeAll
    static void findScript() {
        for (Path candidate : List.of(Path.of("../samples/scripts/connectx-report.sh"),
                Path.of("samples/scripts/connectx-report.sh"))) {
            if (Files.isRegularFile(candidate)) {
                script = candidate.toAbsolutePath().normalize();
            }
        }
        assertNotNull(script, "samples/scripts/connectx-report.sh not found from " + Path.of("").toAbsolutePath());
        assumeTrue(onPath("bash") != null, "no bash on PATH");
    }

    /** The first executable named {@code tool} on this process's PATH, or null. */
    static Path onPath(String tool) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, tool);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }

    Result run(Map<String, String> environment, boolean clearEnvironment, String... args)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(onPath("bash").toString(), script.toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true);
        Path log = Files.createTempFile("connectx-report", ".log");
        pb.redirectOutput(log.toFile());
        if (clearEnvironment) {
            pb.environment().clear();
        }
        pb.environment().putAll(environment);
        Process p = pb.start();
        try {
            if (!p.waitFor(RUN_LIMIT_SECONDS, TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                throw new AssertionError("connectx-report.sh ran past " + RUN_LIMIT_SECONDS + " s; a machine without"
                        + " the pieces must be refused at once: " + Files.readString(log));
            }
            return new Result(p.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(log);
        }
    }

    static boolean hasMlx5Device() throws IOException {
        Path ib = Path.of("/sys/class/infiniband");
        if (!Files.isDirectory(ib)) {
            return false;
        }
        try (DirectoryStream<Path> devices = Files.newDirectoryStream(ib, "mlx5_*")) {
            return devices.iterator().hasNext();
        }
    }

    static boolean hasGpu() {
        return Files.exists(Path.of("/dev/nvidia0")) || onPath("nvidia-smi") != null;
    }

    void assertNothingRan(Result r) throws IOException {
        assertFalse(r.output().contains("connectx-report: running"), r.output());
        try (DirectoryStream<Path> left = Files.newDirectoryStream(workDir)) {
            assertFalse(left.iterator().hasNext(), "the refused run left files in its working directory");
        }
    }

    @Test
    void refusesOnThisMachineNamingTheMissingNicAndGpu() throws Exception {
        boolean mlx5 = hasMlx5Device();
        boolean gpu = hasGpu();
        assumeFalse(mlx5 && gpu, "this machine has an mlx5 device and a GPU: the script would run the checks");
        Result r = run(Map.of(), false);
        assertEquals(2, r.exitCode(), r.output());
        assertTrue(r.output().contains("connectx-report: this machine cannot run the ConnectX checks; missing:"),
                r.output());
        if (!mlx5) {
            assertTrue(r.output().contains("  - no mlx5 device in /sys/class/infiniband"), r.output());
        }
        if (!gpu) {
            assertTrue(r.output().contains("  - no GPU: nvidia-smi lists no NVIDIA GPU and /dev/nvidia0 does not"
                    + " exist"), r.output());
        }
        if (!Files.exists(Path.of("/sys/module/nvidia_peermem"))
                && !Files.exists(Path.of("/proc/driver/nvidia/version"))) {
            assertTrue(r.output().contains("  - no nvidia_peermem/dma-buf: nvidia_peermem is not loaded"), r.output());
        }
        assertTrue(r.output().contains("Nothing was run. docs/CONNECTX.md"), r.output());
        assertNothingRan(r);
    }

    @Test
    void refusesWithoutJavaAndMavenNamingThem() throws Exception {
        // A PATH holding only the tools the machine check uses: no java, no mvn, no nvidia-smi, no ldconfig.
        Path bin = Files.createDirectory(workDir.resolve("bin"));
        for (String tool : List.of("bash", "dirname", "uname", "grep", "sed", "head")) {
            Path real = onPath(tool);
            assumeTrue(real != null, "no " + tool + " on PATH");
            Files.createSymbolicLink(bin.resolve(tool), real.toRealPath());
        }
        Path run = Files.createDirectory(workDir.resolve("run"));
        workDir = run;
        Result r = run(Map.of("PATH", bin.toString(), "HOME", System.getProperty("java.io.tmpdir")), true);
        assertEquals(2, r.exitCode(), r.output());
        assertTrue(r.output().contains("  - no java: none on PATH (and JAVA unset); install a JDK 17 or newer"),
                r.output());
        assertTrue(r.output().contains("  - no mvn: the hardware tests run through Maven"), r.output());
        assertNothingRan(r);
    }

    @Test
    void anUnknownOptionIsRefusedAndHelpSaysWhatRuns() throws Exception {
        Result bad = run(Map.of(), false, "--nic-please");
        assertEquals(2, bad.exitCode(), bad.output());
        assertTrue(bad.output().contains("connectx-report: unknown option '--nic-please'"), bad.output());
        Result help = run(Map.of(), false, "--help");
        assertEquals(0, help.exitCode(), help.output());
        assertTrue(help.output().contains("GDA4J_NIC=mlx5"), help.output());
        assertTrue(help.output().contains("Mlx5IbgdaGpuTest"), help.output());
    }
}
