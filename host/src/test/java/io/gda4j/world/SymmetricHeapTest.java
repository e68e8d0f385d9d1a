package io.gda4j.world;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SymmetricHeapTest {
    @Test
    void allocationsAreAlignedAndDisjoint() {
        SymmetricHeap h = new SymmetricHeap(1 << 20);
        HeapBuffer a = h.allocate(100);
        HeapBuffer b = h.allocate(10, 64);
        HeapBuffer s = h.allocateSignals(4);
        assertEquals(0, a.offset());
        assertEquals(0, b.offset() % 64);
        assertTrue(b.offset() >= a.end());
        assertEquals(0, s.offset() % 128);
        assertTrue(s.offset() >= b.end());
        assertEquals(s.offset() + 24, s.word(3));
        assertThrows(IndexOutOfBoundsException.class, () -> s.word(16));
    }

    @Test
    void exhaustionNamesTheSettingToRaise() {
        SymmetricHeap h = new SymmetricHeap(4096);
        h.allocate(4000);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> h.allocate(200));
        assertTrue(e.getMessage().contains(WorldConfig.HEAP_SIZE_ENV), e.getMessage());
    }

    @Test
    void rangeChecksRejectEveryWayOut() {
        SymmetricHeap h = new SymmetricHeap(4096);
        h.checkRange("x", 0, 4096);
        h.checkRange("x", 4096, 0);
        assertThrows(IllegalArgumentException.class, () -> h.checkRange("x", 4090, 7));
        assertThrows(IllegalArgumentException.class, () -> h.checkRange("x", -1, 1));
        assertThrows(IllegalArgumentException.class, () -> h.checkRange("x", 1, Long.MAX_VALUE));
        assertThrows(IllegalArgumentException.class, () -> h.allocate(8, 3));
    }
}
