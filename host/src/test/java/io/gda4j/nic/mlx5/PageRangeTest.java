package io.gda4j.nic.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Rounding libmlx5's objects out to the host pages CUDA registers and exports. */
class PageRangeTest {
    static final long PAGE = 4096;

    @Test
    void aDoorbellRecordInsideAPageMapsThatPage() {
        // mlx5 doorbell records are 8-byte slots of a shared page; the UAR register sits at 0x800 of its page.
        assertEquals(new PageRange(0x7f0000010000L, 0x7f0000011000L), PageRange.around(0x7f0000010040L, 8, PAGE));
        assertEquals(new PageRange(0x7f0000020000L, 0x7f0000021000L), PageRange.around(0x7f0000020800L, 8, PAGE));
    }

    @Test
    void aSendQueueAfterTheReceiveQueueStartsMidPage() {
        // mlx5dv_qp.sq.buf = qp buffer + rq size (64 bytes for one receive WQE): 1024 WQEBBs span 17 pages.
        long buf = 0x7f1234560000L;
        PageRange sq = PageRange.around(buf + 64, 1024 * 64, PAGE);
        assertEquals(buf, sq.start());
        assertEquals(buf + 17 * PAGE, sq.end());
        assertEquals(17 * PAGE, sq.lengthBytes());
    }

    @Test
    void anAlignedRangeStaysAsItIs() {
        assertEquals(new PageRange(0x10000, 0x12000), PageRange.around(0x10000, 2 * PAGE, PAGE));
        assertEquals(new PageRange(0x10000, 0x11000), PageRange.around(0x10fff, 1, PAGE));
        assertEquals(new PageRange(0x10000, 0x12000), PageRange.around(0x10fff, 2, PAGE));
    }

    @Test
    void largePagesOfAarch64() {
        long page64k = 65536;
        PageRange r = PageRange.around(0xffff00012345L, 100, page64k);
        assertEquals(0xffff00010000L, r.start());
        assertEquals(0xffff00020000L, r.end());
    }

    @Test
    void containsAndOverlaps() {
        PageRange a = new PageRange(0x10000, 0x14000);
        assertTrue(a.contains(new PageRange(0x11000, 0x12000)));
        assertTrue(a.contains(a));
        assertFalse(a.contains(new PageRange(0x13000, 0x15000)));
        assertTrue(a.overlaps(new PageRange(0x13000, 0x15000)));
        assertFalse(a.overlaps(new PageRange(0x14000, 0x15000)), "end is exclusive");
        assertTrue(a.contains(0x13fffL));
        assertFalse(a.contains(0x14000L));
    }

    @Test
    void rejectsWhatCannotBeMapped() {
        assertThrows(IllegalArgumentException.class, () -> PageRange.around(0x1000, 8, 3000));
        assertThrows(IllegalArgumentException.class, () -> PageRange.around(0, 8, PAGE));
        assertThrows(IllegalArgumentException.class, () -> PageRange.around(0x1000, 0, PAGE));
        assertThrows(IllegalArgumentException.class, () -> PageRange.around(-4096L, 8, PAGE));
        assertThrows(IllegalArgumentException.class, () -> new PageRange(0x2000, 0x2000));
    }
}
