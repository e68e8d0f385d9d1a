package io.gda4j.samples;

import io.gda4j.config.Setting;
import io.gda4j.cuda.Cuda;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A bad {@code GDA4J_*} variable or {@code gda4j.*} property as a user meets it: {@code gda4j} runs in a JVM of its
 * own with that environment, exits 2 with one line naming the setting and what it accepts, and {@code info} still
 * lists every setting and marks the bad one.
 */
class SettingsCliTest {
    /**
     * Runs {@code gda4j ARGS} in a new JVM (this test's class path) with {@code env} added ({@code NAME=value}) and
     * {@code -D} options.
     */
    static CliRun gda4j(List<String> env, List<String> properties, String... args)
            throws IOException, InterruptedException {
        // Native access enabled as the launcher does (JDK 17 accepts the option; JDK 22+ warns without it).
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED"));
        for (String p : properties) {
            command.add("-D" + p);
        }
        command.addAll(List.of("-cp", TestClassPath.get(), Main.class.getName()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command);
        // A clean slate: no GDA4J_* setting of the machine running the tests leaks in.
        pb.environment().keySet().removeIf(k -> k.startsWith("GDA4J_"));
        for (String e : env) {
            int eq = e.indexOf('=');
            pb.environment().put(e.substring(0, eq), e.substring(eq + 1));
        }
        File out = File.createTempFile("gda4j-cli", ".out");
        File err = File.createTempFile("gda4j-cli", ".err");
        try {
            Process p = pb.redirectOutput(out).redirectError(err).start();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException("gda4j " + String.join(" ", args) + " did not finish in 60 s");
            }
            return new CliRun(p.exitValue(), Files.readString(out.toPath(), StandardCharsets.UTF_8),
                    Files.readString(err.toPath(), StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out.toPath());
            Files.deleteIfExists(err.toPath());
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "GDA4J_HEAP_SIZE=abc           | latency",
        "GDA4J_WAIT_TIMEOUT_MS=-1      | latency",
        "GDA4J_WAIT_TIMEOUT_MS=3000000000 | latency",
        "GDA4J_GPUS=abc                | bandwidth",
        "GDA4J_HOST_FLAG=nope          | hostflag",
        "GDA4J_PROXY_FIFO_DEPTH=100    | latency",
        "GDA4J_NIC=infiniband          | compare",
        "GDA4J_IBGDA_SQ_DEPTH=3        | latency",
        "GDA4J_MLX5_MTU=9000           | latency",
        "GDA4J_DEBUG=yes               | latency",
    })
    void aBadVariableIsExit2AndOneLineNamingItAndWhatItAccepts(String assignment, String command) throws Exception {
        CliRun r = gda4j(List.of(assignment), List.of(), command);
        assertEquals(2, r.code(), r::toString);
        assertEquals(1, r.err().strip().lines().count(), r::toString);
        assertTrue(r.err().startsWith("gda4j " + command + ": " + assignment + " is not valid: "), r::toString);
        assertTrue(r.err().contains(" must be "), r::toString);
        assertFalse(r.err().contains("--timeout-ms"), "blames an option the user did not pass: " + r);
    }

    @Test
    void aMessageThatPointsToInfoDoesSoOnce() throws Exception {
        CliRun r = gda4j(List.of("GDA4J_TRANSPORT=bogus"), List.of(), "latency");
        assertEquals(2, r.code(), r::toString);
        assertEquals(1, count(r.err(), "gda4j info"), r::toString);
        assertTrue(r.err().strip().endsWith("lists them)."), r::toString);
    }

    @Test
    void aPropertyWinsOverTheEnvironmentAndIsTheOneNamed() throws Exception {
        CliRun r = gda4j(List.of("GDA4J_PROXY_THREADS=2"), List.of("gda4j.proxy.threads=0"), "latency");
        assertEquals(2, r.code(), r::toString);
        assertTrue(r.err().contains("-Dgda4j.proxy.threads=0 is not valid: proxy threads must be a whole number from 1"
                + " to 64"), r::toString);
        CliRun good = gda4j(List.of("GDA4J_PROXY_THREADS=zero"), List.of("gda4j.proxy.threads=2"), "compare", "--from",
                "/no/such/file.csv");
        assertTrue(good.err().contains("no such file"), "the good property hides the bad variable: " + good);
    }

    @Test
    void infoListsEverySettingAndMarksTheBadOne() throws Exception {
        CliRun r = gda4j(List.of("GDA4J_GPUS=a,b", "GDA4J_PROXY_IDLE=nap"), List.of(), "info");
        assertEquals(0, r.code(), r::toString);
        for (Setting<?> s : Configuration.all()) {
            assertTrue(r.out().contains(s.envName() + " / -D" + s.propertyName()), s + " missing from:\n" + r.out());
        }
        assertTrue(r.out().contains("BAD 'a,b'"), r.out());
        assertTrue(r.out().contains("^ GDA4J_GPUS=a,b is not valid: GPUs of the ranks must be "), r.out());
        assertTrue(r.out().contains("^ GDA4J_PROXY_IDLE=nap is not valid: "), r.out());
        // The summary is the paragraph after the version line (info wraps it at 120 columns).
        String summary = r.out().split("\\R\\R", 2)[0].lines().skip(1).reduce("", (a, b) -> a + " " + b.strip())
                .strip();
        assertTrue(summary.startsWith("Summary: ") && summary.contains("2 bad settings: GDA4J_GPUS, GDA4J_PROXY_IDLE"),
                summary);
        assertTrue(r.out().contains("proxy threads"), "the group of a bad setting is still listed in full");
    }

    @Test
    void aMisspeltVariableOrPropertyIsAWarningNamingTheClosestSetting() throws Exception {
        CliRun r = gda4j(List.of("GDA4J_TRANSPROT=p2p", "GDA4J_HEAPSIZE=1g", "GDA4J_FROBNICATE=1"),
                List.of("gda4j.heapsize=1g"), "compare", "--from", "/no/such/file.csv");
        String err = r.err();
        assertTrue(err.contains("gda4j: warning: GDA4J_TRANSPROT is not a gda4j setting and is ignored; did you mean "
                + "GDA4J_TRANSPORT?"), r::toString);
        assertTrue(err.contains("warning: GDA4J_HEAPSIZE is not a gda4j setting and is ignored; did you mean "
                + "GDA4J_HEAP_SIZE?"), r::toString);
        assertTrue(err.contains("warning: -Dgda4j.heapsize is not a gda4j setting and is ignored; did you mean "
                + "-Dgda4j.heapSize?"), r::toString);
        assertTrue(err.contains("warning: GDA4J_FROBNICATE is not a gda4j setting and is ignored\n"), r::toString);
        assertTrue(err.contains("no such file"), "the command still runs: " + r);

        CliRun info = gda4j(List.of("GDA4J_TRANSPROT=p2p"), List.of("gda4j.heapsize=1g"), "info");
        assertEquals(0, info.code(), info::toString);
        assertTrue(info.out().contains("not gda4j settings (ignored)\n    GDA4J_TRANSPROT is not a gda4j setting"),
                info.out());
        assertTrue(info.out().contains("-Dgda4j.heapsize is not a gda4j setting"), info.out());
    }

    @Test
    void settingsGda4jReadsElsewhereAreNotUnknown() {
        java.util.Map<String, String> env = new java.util.HashMap<>();
        Configuration.knownEnv().forEach(n -> env.put(n, "x"));
        env.put("PATH", "/bin");
        java.util.Map<String, String> props = new java.util.HashMap<>();
        Configuration.knownProperties().forEach(n -> props.put(n, "x"));
        props.put("java.home", "/jdk");
        assertEquals(List.of(), Configuration.unknown(env, props));
        assertTrue(Configuration.knownEnv().containsAll(List.of("GDA4J_RANK", "GDA4J_ROOT", "GDA4J_NCCL_LIBRARY",
                "GDA4J_JAVA_OPTS")));
        assertTrue(Configuration.knownProperties().containsAll(List.of("gda4j.moe.lowLatencyProtocol",
                "gda4j.moe.gatherRows", "gda4j.moe.oneKernelDispatch")),
                "the low-latency switches are read (a run warned they were ignored)");
        assertEquals(1, NearestName.editDistance("transprot", "transport"));
        assertTrue(Configuration.all().contains(io.gda4j.samples.nccl.NcclSettings.LIBRARY), "GDA4J_NCCL_LIBRARY in info");
        assertEquals("0", Main.DEBUG.show(k -> null, k -> null).value(), "GDA4J_DEBUG shown as it is set: 1 or 0");
        assertEquals(null, NearestName.of("GDA4J_ZZZZZZZZZZZZ", Configuration.knownEnv()));
    }

    @Test
    void infoSaysEachReasonOnceAndWhatWorksWithoutAGpu() {
        CliRun r = CliRun.of("info");
        assertEquals(0, r.code(), r::toString);
        String out = r.out().replaceAll("\\s+", " "); // as a reader sees it, line breaks of wrapping aside
        assertTrue(r.out().lines().skip(1).findFirst().orElseThrow().startsWith("Summary: "), out);
        if (!Cuda.status().available()) {
            assertEquals(1, count(out, Cuda.status().reason().replaceAll("\\s+", " ")), out);
            assertTrue(out.contains("Without a GPU"), out);
            assertTrue(out.contains("latency, bandwidth, compare, hostflag and moe cannot run here"), out);
            assertTrue(out.contains("mvn -B verify") && out.contains("java -jar benchmarks/target/gda4j-benchmarks.jar")
                    && out.contains("compare --from"), out);
        }
        assertEquals(1, count(out, io.gda4j.verbs.Verbs.status().sentence().replaceAll("\\s+", " ")), out);
    }

    private static int count(String text, String part) {
        int n = 0;
        for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + part.length())) {
            n++;
        }
        return n;
    }

    @Test
    void theReadmeDocumentsEverySetting() throws IOException {
        Path readme = Path.of("..", "README.md");
        String text = Files.readString(readme);
        for (Setting<?> s : Configuration.all()) {
            assertTrue(text.contains("`" + s.envName() + "`") && text.contains("`" + s.propertyName() + "`"),
                    s + " is not in the README's configuration table");
        }
        assertTrue(text.contains("property wins"), "the README says a property wins over the environment");
    }
}
