package io.gda4j.world;

import io.gda4j.mlx5.GccProgram;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Compiles a C++ printer from {@code src/test/c} with g++ against {@code device-ptx/include} and reads the
 * {@code name value} lines it prints: how the layout tests learn what the CUDA headers say, without nvcc or a GPU.
 * Skips where g++ is missing (classes using it carry {@code @RequiresCompilers(tools = "g++")}, so the skip is
 * reported per test).
 */
public final class HeaderValues {
    static final Path INCLUDE = Path.of("..", "device-ptx", "include");

    private HeaderValues() {
    }

    /** Builds {@code src/test/c/<printer>} into {@code workDir}, runs it, and returns its values by name. */
    public static Map<String, Long> of(String printer, Path workDir) throws IOException, InterruptedException {
        Map<String, Long> values = new HashMap<>();
        for (String line : lines(printer, workDir)) {
            String[] kv = line.trim().split(" ");
            values.put(kv[0], Long.parseLong(kv[1]));
        }
        return values;
    }

    /** Builds {@code src/test/c/<printer>} into {@code workDir}, runs it, and returns the lines it prints. */
    public static List<String> lines(String printer, Path workDir) throws IOException, InterruptedException {
        GccProgram.need(onPath("g++"), "g++ is not installed: cannot compile " + printer + " to check the layout");
        Path exe = workDir.resolve(printer.replace('.', '_'));
        Process cc = new ProcessBuilder("g++", "-std=c++17", "-x", "c++", "-I", INCLUDE.toString(),
                Path.of("src", "test", "c", printer).toString(), "-o", exe.toString())
                .redirectErrorStream(true).start();
        String ccOut = new String(cc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, waitFor(cc), "g++ failed:\n" + ccOut);
        Process run = new ProcessBuilder(exe.toString()).redirectErrorStream(true).start();
        String out = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, waitFor(run), out);
        return out.lines().filter(l -> !l.isBlank()).toList();
    }

    static boolean onPath(String tool) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, tool))) {
                return true;
            }
        }
        return false;
    }

    private static int waitFor(Process p) throws InterruptedException {
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return -1;
        }
        return p.exitValue();
    }
}
