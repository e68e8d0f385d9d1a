package io.gda4j.gdrcopy;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Checks {@link GdrInfoDescriptor}, {@link GpuPages} and {@link GdrInfo.MappingType} against what a C compiler makes
 * of the declarations copied from gdrapi.h (gdr_info_layout.c; the header itself is not installed here).
 */
class GdrInfoDescriptorLayoutTest {

    private static Map<String, Long> layout;

    @BeforeAll
    static void compileAndRun(@TempDir Path dir) throws IOException, InterruptedException {
        Path gcc = findOnPath("gcc");
        assumeTrue(gcc != null, "gcc is not on PATH: the gdr_info_t layout cannot be checked against a C compiler");
        Path source = dir.resolve("gdr_info_layout.c");
        try (InputStream in = GdrInfoDescriptorLayoutTest.class.getResourceAsStream("gdr_info_layout.c")) {
            assertNotNull(in, "gdr_info_layout.c is missing from the test resources");
            Files.copy(in, source);
        }
        Path binary = dir.resolve("gdr_info_layout");
        run(dir, gcc.toString(), "-std=c11", "-Wall", "-Werror", "-o", binary.toString(), source.toString());
        String output = run(dir, binary.toString());
        layout = new HashMap<>();
        for (String line : output.split("\n")) {
            String[] parts = line.trim().split(" ");
            if (parts.length == 2) {
                layout.put(parts[0], Long.parseLong(parts[1]));
            }
        }
    }

    private static long c(String name) {
        Long value = layout.get(name);
        assertNotNull(value, "the C program printed no " + name);
        return value;
    }

    @Test
    void sizesMatchTheHeader() {
        assertEquals(c("sizeof_gdr_info_t"), GdrInfoDescriptor.SIZE);
        assertEquals(c("sizeof_gdr_info_v1_t"), GdrInfoDescriptor.V1_SIZE);
        assertEquals(Long.BYTES, c("sizeof_gdr_mh_t"), "gdr_mh_t is bound as one long");
        assertEquals(Integer.BYTES, c("sizeof_mapping_type"), "mapping_type is read as an int");
    }

    @Test
    void offsetsMatchTheHeader() {
        assertEquals(c("offsetof_va"), GdrInfoDescriptor.VA_OFFSET);
        assertEquals(c("offsetof_mapped_size"), GdrInfoDescriptor.MAPPED_SIZE_OFFSET);
        assertEquals(c("offsetof_page_size"), GdrInfoDescriptor.PAGE_SIZE_OFFSET);
        assertEquals(c("offsetof_tm_cycles"), GdrInfoDescriptor.TM_CYCLES_OFFSET);
        assertEquals(c("offsetof_cycles_per_ms"), GdrInfoDescriptor.CYCLES_PER_MS_OFFSET);
        assertEquals(c("offsetof_mapping_type"), GdrInfoDescriptor.MAPPING_TYPE_OFFSET);
        assertEquals(c("v1_offsetof_cycles_per_ms"), GdrInfoDescriptor.CYCLES_PER_MS_OFFSET,
                "v1 is the v2 layout without mapping_type");
    }

    @Test
    void bitFieldsLiveInTheFlagsWord() {
        assertEquals(c("flags_offset"), GdrInfoDescriptor.FLAGS_OFFSET);
        assertEquals(c("flags_offset_wc"), GdrInfoDescriptor.FLAGS_OFFSET);
        int mappedWord = (int) c("flags_word_mapped");
        int wcWord = (int) c("flags_word_wc_mapping");
        assertEquals(mappedWord, GdrInfoDescriptor.flagsOf(true, false));
        assertEquals(wcWord, GdrInfoDescriptor.flagsOf(false, true));
        assertTrue(GdrInfoDescriptor.isMapped(mappedWord) && !GdrInfoDescriptor.isWcMapping(mappedWord));
        assertTrue(GdrInfoDescriptor.isWcMapping(wcWord) && !GdrInfoDescriptor.isMapped(wcWord));
    }

    @Test
    void pageSizeAndMappingTypesMatchTheHeader() {
        assertEquals(c("gpu_page_size"), GpuPages.GPU_PAGE_SIZE);
        assertEquals(c("mapping_type_none"), GdrInfo.MappingType.NONE.code());
        assertEquals(c("mapping_type_wc"), GdrInfo.MappingType.WC.code());
        assertEquals(c("mapping_type_caching"), GdrInfo.MappingType.CACHING.code());
        assertEquals(c("mapping_type_device"), GdrInfo.MappingType.DEVICE.code());
    }

    private static Path findOnPath(String program) {
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String dir : path.split(java.io.File.pathSeparator)) {
            Path candidate = Path.of(dir, program);
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    private static String run(Path dir, String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), String.join(" ", command) + " did not finish");
        assertEquals(0, process.exitValue(), String.join(" ", command) + " failed:\n" + output);
        return output;
    }
}
