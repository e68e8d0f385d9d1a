package io.gda4j.world;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
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
    void aFreedRegionIsReusedSoAllocatingAndFreeingForeverNeverExhaustsTheHeap() {
        SymmetricHeap h = new SymmetricHeap(1 << 20);
        HeapBuffer keep = h.allocateSignals(1);
        HeapBuffer first = h.allocate(700 << 10);   // more than half the heap: a leak fails the second round
        h.free(first);
        for (int i = 0; i < 10_000; i++) {
            HeapBuffer region = h.allocate(700 << 10);
            assertEquals(first, region, "round " + i);
            h.free(region);
        }
        assertEquals((1 << 20) - keep.sizeBytes(), h.freeBytes());
    }

    @Test
    void freedNeighboursMergeAndTheLowestFitIsTaken() {
        SymmetricHeap h = new SymmetricHeap(4096);
        HeapBuffer a = h.allocate(1024);
        HeapBuffer b = h.allocate(1024);
        HeapBuffer c = h.allocate(1024);
        h.free(a);
        h.free(c);
        assertEquals(2048, h.largestFreeBytes(), "c merged with the tail");
        assertEquals(a, h.allocate(1024), "the lowest range that fits");
        h.free(a);
        h.free(b);
        assertEquals(4096, h.largestFreeBytes(), "a, b and the tail merged into one range");
        assertEquals(new HeapBuffer(0, 4096), h.allocate(4096));
    }

    @Test
    void theSameCallsGiveTheSameOffsetsInEveryProcess() {
        long[][] offsets = new long[2][];
        for (int process = 0; process < 2; process++) {
            SymmetricHeap h = new SymmetricHeap(1 << 16);
            HeapBuffer a = h.allocate(3000, 64);
            HeapBuffer b = h.allocateSignals(3);
            h.free(a);
            HeapBuffer c = h.allocate(100, 1024);
            HeapBuffer d = h.allocate(5000);
            offsets[process] = new long[] {a.offset(), b.offset(), c.offset(), d.offset()};
        }
        assertArrayEquals(offsets[0], offsets[1]);
    }

    @Test
    void aRegionIsFreedOnceAndOnlyByItsHeap() {
        SymmetricHeap h = new SymmetricHeap(4096);
        HeapBuffer a = h.allocate(100);
        h.free(a);
        IllegalArgumentException twice = assertThrows(IllegalArgumentException.class, () -> h.free(a));
        assertTrue(twice.getMessage().contains("freed already"), twice.getMessage());
        assertThrows(IllegalArgumentException.class, () -> h.free(new HeapBuffer(256, 100)), "never handed out");
        HeapBuffer b = h.allocate(512);
        assertThrows(IllegalArgumentException.class, () -> h.free(new HeapBuffer(b.offset(), 256)), "a part of it");
        h.free(new HeapBuffer(0, 0));
    }

    @Test
    void exhaustionOfAFragmentedHeapNamesTheLongestRange() {
        SymmetricHeap h = new SymmetricHeap(4096);
        HeapBuffer a = h.allocate(1024);
        h.allocate(1024);
        h.allocate(1024);
        h.free(a);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> h.allocate(1500));
        assertTrue(e.getMessage().contains("2 KiB of 4 KiB left (the longest free range 1 KiB)"), e.getMessage());
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
