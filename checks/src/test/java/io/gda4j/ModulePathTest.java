package io.gda4j;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The command line runs on the module path as README.md ("API") says to start it, in a child JVM: its modules
 * resolve, the host's and the proxy's transport providers and the NIC providers are bound through {@code uses} and
 * {@code provides}, the toolkit's PTX is read through io.gda4j.ptx, JNA loads libibverbs (or says why not) and JCuda
 * its native library from the patched jcuda module. {@code info --json}, which needs no GPU, must say on the module
 * path exactly what it says on the class path, and list every transport. On JDK 25 no JVM warning may appear with
 * {@code --enable-native-access=com.sun.jna,jcuda}, and without it the JVM asks for exactly those two modules.
 *
 * <p>JDK 25 is given by {@value #JDK25_PROP_NAME} ({@code .ci/run} sets it); without it only the build's JDK is
 * tested, and the JDK 25 test is skipped saying so.
 */
class ModulePathTest {
    static final String JDK25_PROP_NAME = "gda4j.test.jdk25";
    static final String NATIVE_ACCESS = "--enable-native-access=com.sun.jna,jcuda";
    static final String MAIN_CLASS = "io.gda4j.samples.Main";
    static final String MAIN = "io.gda4j.samples/" + MAIN_CLASS;
    static final long CHILD_TIMEOUT_SECONDS = 60;
    /** What JCuda's load failure says where its natives were not found (Cuda.linkFailureReason). */
    static final String NATIVES_NOT_FOUND = "JCuda's native library was not found";

    @TempDir
    Path tmp;

    @Test
    @Timeout(180)
    void infoOnTheModulePathSaysWhatItSaysOnTheClassPath() {
        checkOn(Path.of(System.getProperty("java.home")));
    }

    @Test
    @Timeout(240)
    void infoOnTheModulePathOfJdk25() {
        String jdk25 = System.getProperty(JDK25_PROP_NAME);
        assumeTrue(jdk25 != null && !jdk25.isBlank(), JDK25_PROP_NAME + " is not set: the module path was tested on"
                + " the build's JDK only (.ci/run sets it to the JDK 25 it finds; or -D" + JDK25_PROP_NAME
                + "=/usr/lib/jvm/temurin-25-jdk-amd64)");
        Path home = Path.of(jdk25);
        assertTrue(Files.isExecutable(java(home)), JDK25_PROP_NAME + "=" + jdk25 + " has no bin/java");
        int feature = featureVersion(home);
        assertTrue(feature >= 25, JDK25_PROP_NAME + "=" + jdk25 + " is JDK " + feature + ", not 25 or newer");
        checkOn(home);

        // The check can fail: without the option the JVM warns, naming exactly the modules the option lists.
        Run bare = modulePath(home, List.of(), true, "bare");
        assertEquals(0, bare.exitCode(), bare.describe());
        for (String module : List.of("com.sun.jna", "jcuda")) {
            assertTrue(bare.stderr().contains("--enable-native-access=" + module), "no warning asks native access for "
                    + module + " without " + NATIVE_ACCESS + ": " + bare.describe());
        }
        for (String line : bare.stderr().split("\n")) {
            Matcher asks = Pattern.compile("--enable-native-access=(\\S+)").matcher(line);
            if (asks.find()) {
                assertTrue(NATIVE_ACCESS.contains(asks.group(1)), "the JVM asks native access for a module "
                        + NATIVE_ACCESS + " does not name: " + line);
            }
        }
    }

    /** The module path against the class path on the JDK at {@code home}, and the missing-patch message. */
    private void checkOn(Path home) {
        Run classPath = classPath(home);
        assertEquals(0, classPath.exitCode(), classPath.describe());
        Run modules = modulePath(home, List.of(NATIVE_ACCESS), true, "modules");
        assertEquals(0, modules.exitCode(), modules.describe());
        assertNoJvmWarning(modules);
        assertNoJvmWarning(classPath);

        String json = modules.stdout().strip();
        for (String transport : List.of("p2p", "ibgda", "proxy")) {
            assertTrue(json.matches("(?s).*\"transports\":\\[[^\\]]*\\{\"name\":\"" + transport + "\".*"),
                    "transport " + transport + " is not listed on the module path: " + modules.describe());
        }
        for (String nic : List.of("mlx5", "emulated")) {
            assertTrue(json.contains("{\"name\":\"" + nic + "\",\"available\":"), "NIC provider " + nic
                    + " is not listed on the module path: " + modules.describe());
        }
        assertTrue(json.contains("\"kernels\":\"PTX for sm_"), "the shipped PTX was not read: " + modules.describe());
        assertTrue(json.contains("\"rdma\":\"RDMA verbs: "), "no libibverbs status: " + modules.describe());
        assertFalse(json.contains(NATIVES_NOT_FOUND), "JCuda's natives were not found: " + modules.describe());
        assertEquals(classPath.stdout().strip(), json, "info --json differs between the class path and the module"
                + " path on " + home);

        // JCuda's natives left on the module path (not patched), with a JCuda that extracted nothing before: CUDA is
        // unavailable, and the reason says how to patch them in.
        Run unpatched = modulePath(home, List.of(NATIVE_ACCESS), false, "unpatched");
        assertEquals(0, unpatched.exitCode(), unpatched.describe());
        assertTrue(unpatched.stdout().contains(NATIVES_NOT_FOUND) && unpatched.stdout().contains("--patch-module jcuda="),
                "JCuda's natives outside the jcuda module went unnoticed: " + unpatched.describe());
    }

    private static void assertNoJvmWarning(Run run) {
        for (String line : run.stderr().split("\n")) {
            assertFalse(line.startsWith("WARNING:"), "the JVM warned: " + run.describe());
        }
    }

    private Run classPath(Path home) {
        List<String> command = new ArrayList<>(List.of(java(home).toString(), "--enable-native-access=ALL-UNNAMED",
                "-cp", ModulePath.join(ModulePath.entries()), MAIN_CLASS, "info", "--json"));
        return run(command, "classpath");
    }

    /** The command line on the module path, with {@code options}; JCuda's natives patched into jcuda or beside it. */
    private Run modulePath(Path home, List<String> options, boolean patched, String name) {
        List<Path> entries = ModulePath.entries();
        List<String> command = new ArrayList<>(List.of(java(home).toString()));
        command.addAll(options);
        if (patched) {
            command.addAll(List.of("--module-path", ModulePath.withoutJcudaNatives(entries),
                    "--patch-module", "jcuda=" + ModulePath.jcudaNatives(entries)));
        } else {
            command.addAll(List.of("--module-path", ModulePath.join(entries)));
        }
        command.addAll(List.of("-m", MAIN, "info", "--json"));
        return run(command, name);
    }

    /**
     * Runs {@code command} (its java.io.tmpdir a fresh directory: JCuda reuses a native library an earlier run
     * extracted there) and waits for it.
     */
    private Run run(List<String> command, String name) {
        try {
            Path dir = Files.createDirectory(tmp.resolve(name + "-" + System.nanoTime()));
            List<String> full = new ArrayList<>(command);
            full.add(1, "-Djava.io.tmpdir=" + Files.createDirectory(dir.resolve("tmp")));
            Path out = dir.resolve("stdout");
            Path err = dir.resolve("stderr");
            Process p = new ProcessBuilder(full).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            if (!p.waitFor(CHILD_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor();
                throw new AssertionError("no answer within " + CHILD_TIMEOUT_SECONDS + " s: " + full);
            }
            return new Run(full, p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    private static Path java(Path home) {
        return home.resolve("bin").resolve("java");
    }

    /** The JDK's feature version, from its {@code release} file ({@code JAVA_VERSION="25.0.1"}). */
    static int featureVersion(Path home) {
        try {
            Matcher m = Pattern.compile("(?m)^JAVA_VERSION=\"(\\d+)").matcher(Files.readString(home.resolve("release")));
            assertTrue(m.find(), home + "/release names no JAVA_VERSION");
            return Integer.parseInt(m.group(1));
        } catch (IOException e) {
            throw new UncheckedIOException(home + " has no release file", e);
        }
    }

    record Run(List<String> command, int exitCode, String stdout, String stderr) {
        String describe() {
            return "exit " + exitCode + " of " + String.join(" ", command) + "\n--- stderr:\n" + stderr
                    + "\n--- stdout:\n" + stdout;
        }
    }
}
