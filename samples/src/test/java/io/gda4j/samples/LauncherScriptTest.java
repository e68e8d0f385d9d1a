package io.gda4j.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code gda4j} launcher script as a user meets it, run with bash in a copy of the repository's layout: through a
 * symlink on PATH it finds the jar beside the real script, and without a {@code java} it says so and exits 2. A fake
 * {@code java} prints its arguments, so no jar has to be built.
 */
class LauncherScriptTest {
    @TempDir
    Path dir;
    private Path bash;
    private Path repo;

    record Result(int code, String out, String err) {
    }

    @BeforeEach
    void layout() throws IOException {
        bash = which("bash");
        assumeTrue(bash != null, "no bash on PATH: the launcher script is a bash script");
        assumeTrue(which("readlink") != null, "no readlink on PATH, which the script uses to follow symlinks");
        repo = Files.createDirectories(dir.resolve("repo"));
        Path script = Files.copy(ReadmeSnippetsTest.readme().resolveSibling("gda4j"), repo.resolve("gda4j"),
                StandardCopyOption.COPY_ATTRIBUTES);
        assertTrue(Files.isRegularFile(script));
        Files.createDirectories(repo.resolve("samples/target"));
        Files.writeString(repo.resolve("samples/target/gda4j.jar"), "not a jar: the fake java never opens it");
    }

    /** A directory holding a fake {@code java} that prints its arguments, and links to readlink. */
    private Path fakeJavaBin() throws IOException {
        Path bin = Files.createDirectories(dir.resolve("fake-bin"));
        Path java = bin.resolve("java");
        Files.writeString(java, "#!" + bash + "\nprintf 'java'; printf ' %s' \"$@\"; echo\n");
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
        // A wrapper rather than a link out of the temporary directory, which JUnit warns about when deleting it.
        Path readlink = bin.resolve("readlink");
        Files.writeString(readlink, "#!" + bash + "\nexec " + which("readlink") + " \"$@\"\n");
        Files.setPosixFilePermissions(readlink, PosixFilePermissions.fromString("rwxr-xr-x"));
        return bin;
    }

    private Result run(Path script, String path, String... args) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of(bash.toString(), script.toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile());
        Map<String, String> env = pb.environment();
        env.keySet().removeIf(k -> k.startsWith("GDA4J_") || k.equals("JAVA"));
        env.put("PATH", path);
        File out = dir.resolve("out.txt").toFile();
        File err = dir.resolve("err.txt").toFile();
        Process p = pb.redirectOutput(out).redirectError(err).start();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "the script did not finish in 30 s");
        return new Result(p.exitValue(), Files.readString(out.toPath(), StandardCharsets.UTF_8),
                Files.readString(err.toPath(), StandardCharsets.UTF_8));
    }

    @Test
    void throughASymlinkChainOnPathItRunsTheJarBesideTheRealScript() throws Exception {
        Path bin = fakeJavaBin();
        Path onPath = Files.createDirectories(dir.resolve("on-path"));
        Path other = Files.createDirectories(dir.resolve("other"));
        // A relative link to an absolute link to the script: both kinds are followed.
        Files.createSymbolicLink(other.resolve("gda4j-abs"), repo.resolve("gda4j"));
        Files.createSymbolicLink(onPath.resolve("gda4j"), Path.of("../other/gda4j-abs"));
        Result r = run(onPath.resolve("gda4j"), bin.toString(), "--version");
        assertEquals(0, r.code(), r::toString);
        Path jar = repo.toRealPath().resolve("samples/target/gda4j.jar");
        assertTrue(r.out().contains("-jar " + jar + " --version"), r::toString);
        assertFalse(r.err().contains("missing"), r::toString);
    }

    @Test
    void withoutJavaItSaysSoAndExits2() throws Exception {
        Path empty = Files.createDirectories(dir.resolve("empty-bin"));
        Result r = run(repo.resolve("gda4j"), empty.toString(), "info");
        assertEquals(2, r.code(), r::toString);
        assertEquals("", r.out(), r::toString);
        assertTrue(r.err().startsWith("gda4j: no 'java' found"), r::toString);
        assertTrue(r.err().contains("JDK 17"), r::toString);
        assertEquals(1, r.err().strip().lines().count(), r::toString);
    }

    private static Path which(String name) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path p = Path.of(d.isEmpty() ? "." : d, name);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }
}
