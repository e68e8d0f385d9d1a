package io.gda4j.gdrcopy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The real binding (JNA types, by-value gdr_mh_t, out-parameters, close order) against fake_libgdrapi.c, a host-memory
 * stand-in with gdrapi.h's signatures, loaded through {@code -Dgda4j.gdrcopy.library} in a child JVM. It proves the
 * Java side calls libgdrapi correctly; it says nothing about gdrdrv or real BAR1 mappings.
 */
class FakeLibgdrapiTest {

    @Test
    void fullPathAgainstAFakeLibgdrapi(@TempDir Path dir) throws IOException, InterruptedException {
        Map<String, String> out = runScenario(dir, false, true);
        assertEquals("true", out.get("loaded"));
        assertEquals("true", out.get("infoV2"));
        assertTrue(out.get("status").startsWith("gdrcopy: gdrcopy is available: libgdrapi 2.5, gdrdrv 2.4 at "),
                out.get("status"));
        assertEquals("2.5", out.get("runtime"));

        assertEquals(java.nio.ByteOrder.nativeOrder().toString(), out.get("buffer.order"));
        assertEquals("4096", out.get("buffer.capacity"));
        assertEquals("1122334455667788", out.get("buffer.word0"));
        assertEquals("7", out.get("acquire.word8"));
        assertEquals("true", out.get("copyTo.advanced"));
        assertEquals("5,6,9", out.get("copyFrom"));
        assertEquals("1122334455667788", out.get("copyFrom.direct"));
        assertEquals(Long.toHexString(FakeLibgdrapiScenario.ALIGNED), out.get("info.va"));
        assertEquals("65536", out.get("info.mappedSize"));
        assertEquals("WC", out.get("info.mappingType"));
        assertEquals("true", out.get("info.mapped"));
        assertEquals("false", out.get("invalidated"));
        assertEquals("open close open pin1:65536 map1:65536 unmap1 unpin1 close", out.get("log.map").trim(),
                "status() opens and closes a trial handle; map() then opens, pins, maps and undoes it in reverse");

        assertEquals("2.4", out.get("driver"));
        assertEquals("256", out.get("offset.hostMinusMappedPage"), "the view starts at the pinned address");
        assertEquals("gdrcopy", out.get("word.backend"));
        assertEquals(Long.toHexString(FakeLibgdrapiScenario.ALIGNED + 256), out.get("word.deviceAddress"));
        assertEquals("99", out.get("word.get"));
        assertEquals("true", out.get("word.closedLeavesMappingOpen"));
        assertEquals("refused", out.get("secondMap"));
        String handleLog = out.get("log.handle").substring(out.get("log.map").length()).trim();
        assertEquals("open pin2:8 map2:65536 pin3:65536 map3:65536 unmap3 unpin3 unmap2 unpin2 close", handleLog,
                "newest first, each mapping before its pin, gdr_close last");

        assertTrue(out.get("pinFailure").startsWith(String.format("gdr_pin_buffer(0x%x, 8) failed (ret 22 = EINVAL): "
                + "the address must be a cuMemAlloc'd device pointer aligned to 64 KiB",
                FakeLibgdrapiScenario.BAD)), out.get("pinFailure"));
        assertTrue(out.get("openFailure").startsWith("gdr_open() returned NULL: /dev/gdrdrv "), out.get("openFailure"));

        String endLog = out.get("log.end").substring(out.get("log.handle").length()).trim();
        assertEquals("open pin-failed close open-failed "
                + "open pin4:65536 map4:65536 unmap4 unpin4 close "
                + "open pin5:65536 map5:65536 unmap5 unpin5 close", endLog,
                "closing twice or closing the pin first still unmaps, unpins and closes exactly once");
        assertTrue(!out.get("log.end").contains("while-mapped") && !out.get("log.end").contains("close-with"),
                out.get("log.end"));
    }

    @Test
    void olderLibgdrapiWithoutGetInfoV2(@TempDir Path dir) throws IOException, InterruptedException {
        Map<String, String> out = runScenario(dir, true, true);
        assertEquals("true", out.get("loaded"));
        assertEquals("false", out.get("infoV2"));
        assertEquals("WC", out.get("info.mappingType"), "derived from the v1 bits");
        assertEquals("65536", out.get("info.mappedSize"));
        assertEquals("open close open pin1:65536 map1:65536 unmap1 unpin1 close", out.get("log.map").trim());
    }

    @Test
    void driverAbsentWhenTheLibraryLoadsButTheDeviceNodeIsMissing(@TempDir Path dir)
            throws IOException, InterruptedException {
        Map<String, String> out = runScenario(dir, false, false);
        assertEquals("true", out.get("loaded"));
        assertEquals("gdrcopy: libgdrapi is present but " + dir.resolve("gdrdrv")
                + " is missing: load the gdrdrv kernel module", out.get("status"));
        assertTrue(out.get("log.map").trim().startsWith("open pin1"), "status() made no gdr_open call");
    }

    private static Map<String, String> runScenario(Path dir, boolean withoutInfoV2, boolean withDeviceNode)
            throws IOException, InterruptedException {
        Path gcc = findOnPath("gcc");
        assumeTrue(gcc != null, "gcc is not on PATH: the fake libgdrapi cannot be built");
        Path source = dir.resolve("fake_libgdrapi.c");
        try (InputStream in = FakeLibgdrapiTest.class.getResourceAsStream("fake_libgdrapi.c")) {
            assertNotNull(in, "fake_libgdrapi.c is missing from the test resources");
            Files.copy(in, source);
        }
        Path library = dir.resolve("libgdrapi.so.2");
        List<String> compile = new ArrayList<>(List.of(gcc.toString(), "-std=c11", "-Wall", "-Wextra", "-Werror",
                "-shared", "-fPIC", "-o", library.toString(), source.toString()));
        if (withoutInfoV2) {
            compile.add(1, "-DFAKE_NO_INFO_V2");
        }
        run(dir, compile);
        Path deviceNode = dir.resolve("gdrdrv");
        if (withDeviceNode) {
            Files.createFile(deviceNode);
        }
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String output = run(dir, List.of(java, "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                "-D" + GdrcopyConfig.LIBRARY_PROP_NAME + "=" + library,
                "-D" + GdrcopyConfig.DEVICE_PROP_NAME + "=" + deviceNode,
                FakeLibgdrapiScenario.class.getName()));
        Map<String, String> values = new HashMap<>();
        for (String line : output.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                values.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        return values;
    }

    private static Path findOnPath(String program) {
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String dir : path.split(File.pathSeparator)) {
            Path candidate = Path.of(dir, program);
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    private static String run(Path dir, List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(120, TimeUnit.SECONDS), String.join(" ", command) + " did not finish");
        assertEquals(0, process.exitValue(), String.join(" ", command) + " failed:\n" + output);
        return output;
    }
}
