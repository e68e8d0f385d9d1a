package io.gda4j.ibgda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** DeviceQpDescriptor against gda4j/ibgda.cuh's struct DeviceQp, compiled with g++: every offset and flag. */
class DeviceQpLayoutTest {
    static final Path INCLUDE = Path.of("..", "device-ptx", "include");
    static Map<String, Long> header;

    @BeforeAll
    static void compileAndRun(@TempDir Path tmp) throws IOException, InterruptedException {
        assumeTrue(onPath("g++"), "g++ is not installed: cannot compile ibgda.cuh to check the layout");
        Path exe = tmp.resolve("ibgda_layout");
        Process cc = new ProcessBuilder("g++", "-std=c++17", "-x", "c++", "-I", INCLUDE.toString(),
                Path.of("src", "test", "c", "ibgda_layout.cpp").toString(), "-o", exe.toString())
                .redirectErrorStream(true).start();
        String ccOut = new String(cc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, waitFor(cc), "g++ failed:\n" + ccOut);
        Process run = new ProcessBuilder(exe.toString()).redirectErrorStream(true).start();
        String out = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, waitFor(run), out);
        header = new HashMap<>();
        for (String line : out.split("\n")) {
            String[] kv = line.trim().split(" ");
            header.put(kv[0], Long.parseLong(kv[1]));
        }
    }

    @Test
    void everyDescriptorConstantMatchesTheHeader() throws IllegalAccessException {
        int checked = 0;
        for (Field f : DeviceQpDescriptor.class.getFields()) {
            if (!Modifier.isStatic(f.getModifiers()) || f.getType() != int.class || f.getName().equals("ALIGNMENT")) {
                continue;
            }
            Long h = header.get(f.getName());
            assertNotNull(h, f.getName() + " is not printed by ibgda_layout.cpp (add it there)");
            long javaValue = f.getInt(null) & 0xffffffffL;
            assertEquals(h.longValue(), javaValue, f.getName() + ": ibgda.cuh says " + h + ", Java says " + javaValue);
            checked++;
        }
        assertEquals(header.size(), checked, "ibgda_layout.cpp prints a name DeviceQpDescriptor lacks");
    }

    @Test
    void stateLinesStartOnTheirOwnCacheLines() {
        assertEquals(0, DeviceQpDescriptor.RESV_HEAD_OFFSET % 64);
        assertEquals(0, DeviceQpDescriptor.CONS_HEAD_OFFSET % 64);
        assertEquals(0, DeviceQpDescriptor.LENGTH % DeviceQpDescriptor.ALIGNMENT);
    }

    @Test
    void errorWordIsNeverZero() {
        assertEquals(DeviceQpDescriptor.ERROR_SET, DeviceQpDescriptor.errorWord(0, 0, 0));
        assertEquals(0x800d8813, DeviceQpDescriptor.errorWord(0x13, 0x88, 13));
    }

    static boolean onPath(String tool) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, tool))) {
                return true;
            }
        }
        return false;
    }

    static int waitFor(Process p) throws InterruptedException {
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return -1;
        }
        return p.exitValue();
    }
}
