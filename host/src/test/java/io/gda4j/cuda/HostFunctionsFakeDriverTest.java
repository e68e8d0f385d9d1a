package io.gda4j.cuda;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link HostFunctions} and its JNA binding of {@code cuLaunchHostFunc} against fake_libcuda.c, a stand-in built here
 * with gcc and loaded in a child JVM (the test JVM's libcuda binding is made once, and this machine has no libcuda):
 * the callback runs on a driver thread the JVM did not start, named and kept attached; eager work runs once and is
 * forgotten; captured work runs on every replay until its owner closes, then nothing runs there; work that throws is
 * kept as the owner's failure, never thrown into the driver; a closed owner refuses work. (JCuda's own binding frees
 * its callback record after the first call, which a replay would then read.)
 */
class HostFunctionsFakeDriverTest {
    @Test
    void hostFunctionsRunOnTheDriversThreadOnceOrOnEveryReplay(@TempDir Path dir) throws Exception {
        Path gcc = null;
        for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (!d.isEmpty() && Files.isExecutable(Path.of(d, "gcc"))) {
                gcc = Path.of(d, "gcc");
                break;
            }
        }
        assumeTrue(gcc != null, "gcc is not on PATH: the fake libcuda cannot be built");
        Path source = dir.resolve("fake_libcuda.c");
        try (InputStream in = HostFunctionsFakeDriverTest.class.getResourceAsStream("fake_libcuda.c")) {
            assertNotNull(in, "fake_libcuda.c is missing from the test resources");
            Files.copy(in, source);
        }
        run(dir, List.of(gcc.toString(), "-std=c11", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-pthread",
                "-o", dir.resolve(LibCuda.LIBRARY_NAME).toString(), source.toString()));
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Map<String, String> out = new HashMap<>();
        for (String line : run(dir, List.of(java, "--enable-native-access=ALL-UNNAMED", "-Djna.library.path=" + dir,
                "-cp", System.getProperty("java.class.path"), HostFunctionsFakeDriverScenario.class.getName()))
                .split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                out.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        assertEquals("null", out.get("unavailable"), "the binding loads: " + out);
        assertEquals("1", out.get("eager.ran"), "eager work ran when the stream reached it");
        assertEquals("gda4j CUDA host functions", out.get("thread"), "on the driver's thread, named");
        assertEquals("1", out.get("eager.afterReplay"), "eager work is forgotten once it ran");
        assertEquals("0,1", out.get("captured.queued"), "captured work waits for the graph's launch, kept");
        assertEquals("2", out.get("captured.replayed"), "and runs on every replay");
        assertEquals("0", out.get("failing.replay"), "a throwing work returns to the driver normally");
        assertEquals("the work failed", out.get("failure"));
        assertEquals("0,2", out.get("closed.kept"), "closing forgets the captured work: a replay then runs nothing");
        assertTrue(out.getOrDefault("closed.launch", "").contains("are closed"), String.valueOf(out));
    }

    private static String run(Path dir, List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "timed out: " + command);
        assertEquals(0, p.exitValue(), String.join(" ", command) + ":\n" + output);
        return output;
    }
}
