package io.gda4j.samples;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code gda4j info > /dev/full} in a JVM of its own, as a user runs it: System.out swallows the write error, so
 * without the check it would exit 0 and a full disk would look like success.
 */
@Timeout(60)
class FullDiskTest {
    @Test
    void infoIntoAFullDeviceExits1() throws Exception {
        Path full = Path.of("/dev/full");
        assumeTrue(Files.exists(full), "no /dev/full on this machine (Linux has one)");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        for (List<String> args : List.of(List.of("info"), List.of("info", "--json"))) {
            List<String> command = new java.util.ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-cp",
                    TestClassPath.get(), Main.class.getName()));
            command.addAll(args);
            Process p = new ProcessBuilder(command).redirectOutput(full.toFile())
                    .redirectError(ProcessBuilder.Redirect.PIPE).start();
            String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(50, TimeUnit.SECONDS), "gda4j " + args + " did not finish");
            assertEquals(1, p.exitValue(), "gda4j " + args + " > /dev/full -> " + err);
            assertTrue(err.contains("writing to standard output failed"), err);
        }
        assertTrue(new File(java).canExecute());
    }
}
