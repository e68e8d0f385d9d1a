package io.gda4j.samples.nccl;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Loading NCCL: absent here (no GPU, no NCCL) it is reported, never thrown; where it is found it answers. */
class LibNcclTest {
    @Test
    void aMissingLibraryIsReportedNotThrown() {
        if (LibNccl.isAvailable()) {
            assertNull(LibNccl.unavailableReason());
            assertTrue(NcclComms.version() >= 20000, "an NCCL 2 version code, got " + NcclComms.version());
            return;
        }
        String why = LibNccl.unavailableReason();
        assertTrue(why.startsWith("NCCL not found"), why);
        assertTrue(why.contains(LibNccl.LIBRARY_ENV), why);
        assertEquals(why, NcclComms.unavailableReason(new int[] {0, 1}));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> NcclComms.initAll(new int[] {0, 1}));
        assertEquals(why, e.getMessage());
        assertThrows(UnsatisfiedLinkError.class, () -> LibNccl.ncclGroupStart(), "calls fail without the library");
    }

    @Test
    void ranksSharingAGpuAreNamedBeforeNcclIsAsked() {
        assertEquals("NCCL needs one GPU per rank: ranks 0 and 2 share GPU 3",
                NcclComms.unavailableReason(new int[] {3, 1, 3, 0}));
    }

    @Test
    void pythonEnvironmentsAreSearchedOnlyForTheDefaultName(@TempDir Path dir) throws IOException {
        Path venv = dir.resolve("venv");
        Path so = venv.resolve("lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2");
        Files.createDirectories(so.getParent());
        Files.createFile(so);
        Path home = dir.resolve("home");
        Path user = home.resolve(".local/lib/python3.10/site-packages/nvidia/nccl/lib/libnccl.so.2");
        Files.createDirectories(user.getParent());
        Files.createFile(user);
        List<String> found = LibNccl.candidates(LibNccl.LIBRARY_DEFAULT, Map.of("VIRTUAL_ENV", venv.toString()),
                home.toString());
        assertEquals(LibNccl.LIBRARY_DEFAULT, found.get(0), "the loader's path first");
        assertEquals(so.toString(), found.get(1), "then the active virtual environment");
        assertEquals(user.toString(), found.get(2), "then the user's site-packages");
        assertEquals(List.of("/opt/nccl/lib/libnccl.so.2"), LibNccl.candidates("/opt/nccl/lib/libnccl.so.2",
                Map.of("VIRTUAL_ENV", venv.toString()), home.toString()), "a configured library is the only candidate");
    }
}
