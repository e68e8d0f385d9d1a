package io.gda4j.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Compiles and runs the small C programs under {@code host/src/test/c} that print what rdma-core's headers say.
 *
 * <p>A machine without gcc or without libibverbs-dev's headers skips those tests with the reason (the classes carry
 * {@link RequiresCompilers}, so the skip is reported per test; {@link #need} fails instead where
 * {@value #REQUIRE_COMPILERS_PROP_NAME} is true); a program that fails to compile where both are present fails the
 * test, since that is how the compile-time layout checks report a mismatch.
 */
public final class GccProgram {
    private static final long TIMEOUT_SECONDS = 120;

    /** Set to true where gcc, g++ and libibverbs-dev are promised (CI): missing ones then fail the tests. */
    public static final String REQUIRE_COMPILERS_PROP_NAME = "gda4j.test.requireCompilers";
    public static final boolean REQUIRED = Boolean.getBoolean(REQUIRE_COMPILERS_PROP_NAME);

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
     * The device headers' include directory ({@code device-ptx/include}, absolute), found from a module or the
     * reactor root by the header {@code header} (e.g. {@code gda4j/layout/mlx5.cuh}) it must hold.
     *
     * @throws AssertionError naming the header and the working directory where it is not found
     */
    public static Path deviceInclude(String header) {
        for (Path candidate : List.of(Path.of("../device-ptx/include"), Path.of("device-ptx/include"))) {
            if (Files.isRegularFile(candidate.resolve(header))) {
                return candidate.toAbsolutePath().normalize();
            }
        }
        throw new AssertionError("device-ptx/include/" + header + " not found from " + Path.of("").toAbsolutePath());
    }

    /**
     * The CUDA toolkit's include directory (the one holding cuda.h): {@code $CUDA_HOME/include}, then
     * {@code /usr/local/cuda*}, then {@code /usr/include}; null where none holds it (the calling test then skips).
     */
    public static Path cudaInclude() {
        String home = System.getenv("CUDA_HOME");
        Stream<Path> candidates = Stream.of(home == null ? null : Path.of(home, "include"),
                Path.of("/usr/local/cuda/include"), Path.of("/usr/local/cuda-13.0/include"), Path.of("/usr/include"));
        return candidates.filter(p -> p != null && Files.isRegularFile(p.resolve("cuda.h"))).findFirst()
                .orElse(null);
    }

    /**
     * Compiles {@code source} into {@code outputDir}; skips the calling test when gcc or one of {@code headers}
     * (as written in an {@code #include <...>}) is missing.
     */
    public static Path compile(Path source, Path outputDir, List<String> headers, List<String> extraArgs)
            throws IOException, InterruptedException {
        Optional<String> missing = missing(List.of("gcc"), headers);
        need(missing.isEmpty(), missing.orElse(""));

        Path executable = outputDir.resolve(source.getFileName().toString().replaceFirst("\\.c$", ""));
        List<String> command = new ArrayList<>(List.of("gcc", "-std=gnu11", "-O1", "-Wall", "-Wextra", "-Werror"));
        command.addAll(extraArgs);
        command.addAll(List.of(source.toString(), "-o", executable.toString()));
        Result compiled = exec(command, null);
        assertEquals(0, compiled.exitCode, () -> "gcc failed on " + source.getFileName()
                + " (a failed _Static_assert means a Java constant differs from the header):\n" + compiled.output);
        return executable;
    }

    /**
     * Compiles the C++ source {@code source} with g++ (C++17, warnings as errors, {@code extraArgs} after them) into
     * {@code outputDir}; skips the calling test where g++ is missing.
     */
    public static Path compileCxx(Path source, Path outputDir, List<String> extraArgs)
            throws IOException, InterruptedException {
        Optional<String> missing = missing(List.of("g++"), List.of());
        need(missing.isEmpty(), missing.orElse(""));
        Path executable = outputDir.resolve(source.getFileName().toString().replaceFirst("\\.cpp$", ""));
        List<String> command = new ArrayList<>(List.of("g++", "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror"));
        command.addAll(extraArgs);
        command.addAll(List.of(source.toString(), "-o", executable.toString()));
        Result compiled = exec(command, null);
        assertEquals(0, compiled.exitCode, () -> "g++ failed on " + source.getFileName() + ":\n" + compiled.output);
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
        assumeTrue(runs(tool), tool + " is not on the PATH, so " + why);
    }

    /**
     * Skips the calling test with {@code reason} unless {@code ok}; fails it instead where the build promises the
     * compilers ({@value #REQUIRE_COMPILERS_PROP_NAME}).
     */
    public static void need(boolean ok, String reason) {
        if (REQUIRED) {
            assertTrue(ok, () -> reason + " (" + REQUIRE_COMPILERS_PROP_NAME + " is set: the build promises it)");
        } else {
            assumeTrue(ok, reason);
        }
    }

    /**
     * What is missing of {@code tools} (each must run with {@code --version}) and {@code headers} (each must be
     * found by gcc, as written in {@code #include <...>}), in one sentence; empty when nothing is.
     */
    public static Optional<String> missing(List<String> tools, List<String> headers) {
        try {
            for (String tool : tools) {
                if (!runs(tool)) {
                    return Optional.of(tool + " is not on the PATH (" + INSTALL_HINT + ")");
                }
            }
            if (headers.isEmpty()) {
                return Optional.empty();
            }
            Path probe = Files.createTempFile("gda4j-header-probe", ".c");
            try {
                StringBuilder text = new StringBuilder();
                for (String header : headers) {
                    text.append("#include <").append(header).append(">\n");
                }
                Files.writeString(probe, text.append("int main(void) { return 0; }\n"));
                Result probed = exec(List.of("gcc", "-fsyntax-only", probe.toString()), null);
                return probed.exitCode == 0 ? Optional.empty() : Optional.of("headers " + headers + " are not "
                        + "installed (" + INSTALL_HINT + "); gcc said: " + probed.output.strip().lines().findFirst()
                        .orElse(""));
            } finally {
                Files.deleteIfExists(probe);
            }
        } catch (IOException e) {
            return Optional.of("cannot probe for " + tools + " and " + headers + ": " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of("interrupted while probing for " + tools);
        }
    }

    /** What README lists as the test prerequisites. */
    static final String INSTALL_HINT = "the layout tests need gcc, g++ and libibverbs-dev: apt-get install gcc g++ "
            + "libibverbs-dev";

    private static boolean runs(String tool) throws InterruptedException {
        try {
            return exec(List.of(tool, "--version"), null).exitCode == 0;
        } catch (IOException e) {
            return false;
        }
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
