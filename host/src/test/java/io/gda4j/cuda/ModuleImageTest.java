package io.gda4j.cuda;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Module images are read and recognised before any GPU is involved, so a bad file fails with a clear message. */
class ModuleImageTest {
    private static final String PTX = ".version 9.0\n.target sm_90\n.address_size 64\n"
            + ".visible .entry k(.param .u64 p) { ret; }\n";

    @Test
    void theToolkitsModulesComeFromTheClassPath() {
        ModuleImage ops = ModuleImage.resource("ops.ptx");
        assertEquals("ops", ops.name());
        assertEquals(ModuleImage.Kind.PTX, ops.kind());
        assertEquals("io/gda4j/ptx/ops.ptx", ops.origin());
    }

    @Test
    void filesAreNamedAfterThemselvesAndRecognised(@TempDir Path dir) throws IOException {
        Path ptx = Files.writeString(dir.resolve("ring_allgather.ptx"), PTX);
        ModuleImage image = ModuleImage.file(ptx);
        assertEquals("ring_allgather", image.name());
        assertEquals(ModuleImage.Kind.PTX, image.kind());

        Path cubin = Files.write(dir.resolve("mine.cubin"), new byte[] {0x7f, 'E', 'L', 'F', 2, 1, 1, 0});
        assertEquals(ModuleImage.Kind.CUBIN, ModuleImage.file(cubin).kind());
        assertEquals("mine", ModuleImage.file(cubin).name());
    }

    @Test
    void missingEmptyAndForeignFilesAreRefusedWithTheReason(@TempDir Path dir) throws IOException {
        IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                () -> ModuleImage.file(dir.resolve("nope.ptx")));
        assertTrue(missing.getMessage().contains("does not exist"), missing.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ModuleImage.file(dir));

        Path empty = Files.write(dir.resolve("empty.ptx"), new byte[0]);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ModuleImage.file(empty)).getMessage()
                .contains("is empty"));

        Path text = Files.writeString(dir.resolve("README.md"), "# not a module\n");
        String why = assertThrows(IllegalArgumentException.class, () -> ModuleImage.file(text)).getMessage();
        assertTrue(why.contains("neither PTX text") && why.contains("nvcc -ptx"), why);
    }

    @Test
    void resourcesOfTheCallersChoosing(@TempDir Path dir) throws IOException {
        Files.createDirectories(dir.resolve("kernels"));
        Files.writeString(dir.resolve("kernels/user.ptx"), PTX);
        try (URLClassLoader loader = new URLClassLoader(new URL[] {dir.toUri().toURL()}, null)) {
            ModuleImage image = ModuleImage.classPathResource("/kernels/user.ptx", loader);
            assertEquals("user", image.name());
            assertTrue(image.origin().contains("kernels/user.ptx"));
            String why = assertThrows(IllegalArgumentException.class,
                    () -> ModuleImage.classPathResource("kernels/other.ptx", loader)).getMessage();
            assertTrue(why.contains("not on the class path"), why);
        }
    }

    @Test
    void bytesAreCopiedSoTheCallerCannotChangeThemLater() {
        byte[] raw = PTX.getBytes(StandardCharsets.US_ASCII);
        ModuleImage image = ModuleImage.bytes("k", raw);
        ModuleImage same = ModuleImage.bytes("k", raw.clone());
        raw[0] = 'X';
        assertTrue(image.sameBytes(same));
        assertFalse(image.sameBytes(ModuleImage.bytes("k", (PTX + "\n").getBytes(StandardCharsets.US_ASCII))));
        assertThrows(IllegalArgumentException.class, () -> ModuleImage.bytes(" ", PTX.getBytes(StandardCharsets.US_ASCII)));
    }
}
