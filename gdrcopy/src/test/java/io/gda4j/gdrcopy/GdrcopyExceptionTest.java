package io.gda4j.gdrcopy;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class GdrcopyExceptionTest {

    @Test
    void pinFailureSaysWhatWasAttemptedAndWhatToDo() {
        GdrcopyException e = GdrcopyException.pinFailed(0x7f0000010000L, 65536, 22);
        assertEquals("gdr_pin_buffer", e.call());
        assertEquals(22, e.returnCode());
        String m = e.getMessage();
        assertTrue(m.startsWith("gdr_pin_buffer(0x7f0000010000, 65536) failed (ret 22 = EINVAL): "), m);
        assertTrue(m.contains("cuMemAlloc'd device pointer aligned to 64 KiB"), m);
        assertTrue(m.contains("CU_POINTER_ATTRIBUTE_SYNC_MEMOPS"), m);
        assertTrue(m.contains("[0x7f0000010000, 0x7f0000020000)"), m);
    }

    @Test
    void negativeCodesAreNamedByMagnitudeAndUnknownOnesShownRaw() {
        assertEquals("EINVAL", GdrcopyException.errnoName(-22));
        assertNull(GdrcopyException.errnoName(4242));
        assertTrue(GdrcopyException.mapFailed(0x10000, 65536, 4242).getMessage().contains("(ret 4242)"));
    }

    @Test
    void openFailureDistinguishesAMissingNodeFromAnUnusableOne() {
        String missing = GdrcopyException.openFailed(Path.of("/dev/gdrdrv"), false).getMessage();
        assertTrue(missing.contains("/dev/gdrdrv does not exist: load the gdrdrv kernel module"), missing);
        String unusable = GdrcopyException.openFailed(Path.of("/dev/gdrdrv"), true).getMessage();
        assertTrue(unusable.contains("can read and write it"), unusable);
        assertTrue(unusable.contains("GDRCOPY_ENABLE_LOGGING=1"), unusable);
    }

    @Test
    void everyCallNamesItself() {
        assertTrue(GdrcopyException.mapFailed(0x10000, 65536, 11).getMessage()
                .startsWith("gdr_map(0x10000, 65536) failed (ret 11 = EAGAIN): "));
        assertTrue(GdrcopyException.unmapFailed(0x10000, 65536, 22).getMessage().startsWith("gdr_unmap(0x10000"));
        assertTrue(GdrcopyException.unpinFailed(0x10000, 22).getMessage().startsWith("gdr_unpin_buffer(0x10000)"));
        assertTrue(GdrcopyException.getInfoFailed(0x10000, 22).getMessage().startsWith("gdr_get_info(0x10000)"));
        assertTrue(GdrcopyException.closeFailed(5).getMessage().startsWith("gdr_close() failed (ret 5 = EIO)"));
        assertTrue(GdrcopyException.copyFailed("gdr_copy_to_mapping", 8, 16, 22).getMessage()
                .startsWith("gdr_copy_to_mapping(offset 8, 16 bytes) failed"));
        assertTrue(GdrcopyException.driverVersionFailed(25).getMessage().contains("ENOTTY"));
    }

    @Test
    void libraryUnavailableKeepsTheStatusSentenceAndPointsAtTheFallback() {
        GdrcopyException e = GdrcopyException.libraryUnavailable("libgdrapi.so.2 not found: gdrcopy is not installed");
        assertTrue(e.getMessage().startsWith("libgdrapi.so.2 not found: gdrcopy is not installed; use a fallback"));
        assertEquals("", e.call());
        assertEquals(0, e.returnCode());
    }
}
