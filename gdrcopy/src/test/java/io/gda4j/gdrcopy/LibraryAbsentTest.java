package io.gda4j.gdrcopy;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * The real native path on a machine without libgdrapi (every machine in this workplace): nothing throws at class
 * load, status says LIBRARY_ABSENT, and every entry point fails with a GdrcopyException rather than a linkage error.
 */
class LibraryAbsentTest {

    private static final long ALIGNED = 0x7f12_3400_0000L;

    @BeforeEach
    void onlyWhereGdrcopyIsMissing() throws ClassNotFoundException {
        Class.forName(LibGdrapi.class.getName(), true, LibGdrapi.class.getClassLoader());
        assumeFalse(LibGdrapi.isLoaded(), "libgdrapi is installed on this machine: the library-absent path cannot "
                + "be exercised here");
    }

    @Test
    void loadingTheBindingDoesNotThrow() {
        assertNotNull(LibGdrapi.loadFailure());
        assertEquals(GdrcopyConfig.fromSystemProperties().libraryName(), LibGdrapi.libraryName());
        assertFalse(LibGdrapi.hasGetInfoV2());
    }

    @Test
    void statusSaysLibraryAbsentInOneLine() {
        GdrcopyStatus status = assertDoesNotThrow(Gdrcopy::status);
        assertEquals(GdrcopyStatus.State.LIBRARY_ABSENT, status.state());
        assertEquals("gdrcopy: libgdrapi.so.2 not found: gdrcopy is not installed", status.oneLine());
        assertTrue(status.detail().contains("libgdrapi.so.2"), status.detail());
        System.out.println(status.oneLine());
    }

    @Test
    void entryPointsThrowGdrcopyExceptionWithTheSentence() {
        GdrcopyException open = assertThrows(GdrcopyException.class, GdrHandle::open);
        assertTrue(open.getMessage().startsWith("libgdrapi.so.2 not found: gdrcopy is not installed"),
                open.getMessage());
        assertThrows(GdrcopyException.class, Gdrcopy::runtimeVersion);
        assertThrows(GdrcopyException.class, () -> Gdrcopy.map(ALIGNED, 8));
        assertThrows(GdrcopyException.class, () -> GdrWord.map(ALIGNED));
    }

    @Test
    void argumentsAreCheckedBeforeTheLibrary() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Gdrcopy.map(ALIGNED + 256, 8));
        assertTrue(e.getMessage().contains("0x7f1234000100 is not aligned to a 64 KiB GPU page"), e.getMessage());
        assertTrue(e.getMessage().contains("GpuPages.overAllocationBytes(8) = 131072"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Gdrcopy.map(ALIGNED, 0));
        assertThrows(IllegalArgumentException.class, () -> Gdrcopy.map(0, 8));
    }

    @Test
    void tryLoadReportsEveryNameItTried() {
        LibGdrapi.LoadResult result = assertDoesNotThrow(
                () -> LibGdrapi.tryLoad(List.of("libgda4j-no-such-library.so.9", "gda4j-no-such-either")));
        assertNull(result.library());
        assertTrue(result.failure().contains("libgda4j-no-such-library.so.9"), result.failure());
        assertTrue(result.failure().contains("gda4j-no-such-either"), result.failure());
        assertFalse(result.failure().contains("\n"), result.failure());
    }

    @Test
    void tryLoadFindsARealLibrary() {
        // libc is everywhere: proves the loader itself works, so LIBRARY_ABSENT above means "not installed"
        LibGdrapi.LoadResult result = LibGdrapi.tryLoad(List.of("libc.so.6"));
        assertNotNull(result.library(), result.failure());
    }
}
