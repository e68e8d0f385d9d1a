package io.gda4j.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Compiles and runs the small C programs under {@code host/src/test/c} that print what rdma-core's headers say.
 *
 * <p>A machine without gcc or without libibverbs-dev's headers skips those tests (JUnit assumptions, with the
 * reason); a program that fails to compile where both are present fails the test, since that is how the
 * compile-time layout checks report a mismatch.
 */
public final class GccProgram {
    private static final long TIMEOUT_SECONDS = 120;

    private GccProgram() {
    }

    /** The C source {@code name} in {@code host/src/test/c}, found from the module or the reactor root. */
    public static Path source(String name) {
        for (Path candidate : List.of(Path.of("src/test/c", name), Path.of("host/src/test/c", name))) {
            if (Files.isRegularFile(candidate)) {
                return candidate.toAbsolutePath();
            }
        }
        throw new IllegalStateException("C test source " + name + " not found under src/test/c (working directory "
                + Path.of("").toAbsolutePath() + ")");
    }

    /**
     * Compiles {@code source} into {@code outputDir}; skips the calling test when gcc or one of {@code headers}
     * (as written in an {@code #include <...>}) is missing.
     */
    public static Path compile(Path source, Path outputDir, List<String> headers, List<String> extraArgs)
            throws IOException, InterruptedException {
        requireTool("gcc", "the layouts cannot be checked against rdma-core's headers here");

        Path probe = outputDir.resolve("header_probe.c");
        StringBuilder probeText = new StringBuilder();
        for (String header : headers) {
            probeText.append("#include <").append(header).append(">\n");
        }
        Files.writeString(probe, probeText.append("int main(void) { return 0; }\n"));
        Result probed = exec(List.of("gcc", "-fsyntax-only", probe.toString()), null);
        assumeTrue(probed.exitCode == 0, "rdma-core headers " + headers + " are not installed (apt-get install"
                + " libibverbs-dev); gcc said: " + probed.output.strip());

        Path executable = outputDir.resolve(source.getFileName().toString().replaceFirst("\\.c$", ""));
        List<String> command = new ArrayList<>(List.of("gcc", "-std=gnu11", "-O1", "-Wall", "-Wextra", "-Werror"));
        command.addAll(extraArgs);
        command.addAll(List.of(source.toString(), "-o", executable.toString()));
        Result compiled = exec(command, null);
        assertEquals(0, compiled.exitCode, () -> "gcc failed on " + source.getFileName()
                + " (a failed _Static_assert means a Java constant differs from the header):\n" + compiled.output);
        return executable;
    }

    /** Runs {@code executable} with {@code stdin} (or none) and returns its standard output; fails on an error exit. */
    public static String run(Path executable, String stdin, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(executable.toString());
        command.addAll(List.of(args));
        Result result = exec(command, stdin);
        assertEquals(0, result.exitCode, () -> executable.getFileName() + " exited with " + result.exitCode + ":\n"
                + result.output);
        return result.output;
    }

    /** Skips the calling test unless {@code tool --version} runs. */
    static void requireTool(String tool, String why) throws InterruptedException {
        Result version;
        try {
            version = exec(List.of(tool, "--version"), null);
        } catch (IOException e) {
            version = null;
        }
        assumeTrue(version != null && version.exitCode == 0, tool + " is not on the PATH, so " + why);
    }

    /** Runs a command (a compiler); fails the test with its output when it exits with an error. */
    static String runCommand(List<String> command) throws IOException, InterruptedException {
        Result result = exec(command, null);
        assertEquals(0, result.exitCode, () -> String.join(" ", command) + " failed:\n" + result.output);
        return result.output;
    }

    private record Result(int exitCode, String output) {
    }

    private static Result exec(List<String> command, String stdin) throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(command);
        Path stderr = Files.createTempFile("gda4j-gcc", ".stderr");
        try {
            builder.redirectError(stderr.toFile());
            Process process = builder.start();
            // Feed stdin from another thread so a program that writes while it reads cannot fill both pipes.
            Thread feeder = new Thread(() -> {
                try (OutputStream in = process.getOutputStream()) {
                    if (stdin != null) {
                        in.write(stdin.getBytes(StandardCharsets.UTF_8));
                    }
                } catch (IOException e) {
                    // The program exited without reading everything; its exit code tells the test.
                }
            }, "gcc-program-stdin");
            feeder.start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            feeder.join();
            if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IOException(command.get(0) + " did not finish in " + TIMEOUT_SECONDS + " s");
            }
            String errors = Files.readString(stderr);
            return new Result(process.exitValue(), errors.isEmpty() ? output : output + errors);
        } finally {
            Files.deleteIfExists(stderr);
        }
    }
}
