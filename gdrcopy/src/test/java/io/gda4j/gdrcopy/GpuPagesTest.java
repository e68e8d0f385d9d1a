package io.gda4j.gdrcopy;

import org.junit.jupiter.api.Test;

import static io.gda4j.gdrcopy.GpuPages.GPU_PAGE_SIZE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class GpuPagesTest {

    private static final long BASE = 0x7f12_3400_0000L; // 64 KiB-aligned, like a large cuMemAlloc result

    @Test
    void constantsMatchGdrapiH() {
        assertEquals(16, GpuPages.GPU_PAGE_SHIFT);
        assertEquals(65536, GPU_PAGE_SIZE);
        assertEquals(0xffffL, GpuPages.GPU_PAGE_OFFSET);
        assertEquals(0xffff_ffff_ffff_0000L, GpuPages.GPU_PAGE_MASK);
    }

    @Test
    void roundingAlreadyAlignedValuesChangesNothing() {
        assertTrue(GpuPages.isAligned(BASE));
        assertEquals(BASE, GpuPages.roundUp(BASE));
        assertEquals(BASE, GpuPages.roundDown(BASE));
        assertEquals(0, GpuPages.roundUp(0));
    }

    @Test
    void roundsToTheNeighbouringPages() {
        assertFalse(GpuPages.isAligned(BASE + 256));
        assertEquals(BASE + GPU_PAGE_SIZE, GpuPages.roundUp(BASE + 1));
        assertEquals(BASE + GPU_PAGE_SIZE, GpuPages.roundUp(BASE + GPU_PAGE_SIZE - 1));
        assertEquals(BASE, GpuPages.roundDown(BASE + GPU_PAGE_SIZE - 1));
        assertEquals(GPU_PAGE_SIZE, GpuPages.roundUp(1));
    }

    @Test
    void overAllocationAddsOnePageToTheRoundedSize() {
        assertEquals(2 * GPU_PAGE_SIZE, GpuPages.overAllocationBytes(1));
        assertEquals(2 * GPU_PAGE_SIZE, GpuPages.overAllocationBytes(8));
        assertEquals(2 * GPU_PAGE_SIZE, GpuPages.overAllocationBytes(GPU_PAGE_SIZE));
        assertEquals(3 * GPU_PAGE_SIZE, GpuPages.overAllocationBytes(GPU_PAGE_SIZE + 1));
    }

    @Test
    void anOverAllocatedBufferAlwaysHoldsTheRoundedUpRange() {
        long size = 100_000;
        long allocationSize = GpuPages.overAllocationBytes(size);
        // cuMemAlloc pointers are at least 256-byte aligned; try every such offset within a page
        for (long misalignment = 0; misalignment < GPU_PAGE_SIZE; misalignment += 256) {
            long allocation = BASE + misalignment;
            GpuPageRange range = GpuPages.alignedInside(allocation, allocationSize, size);
            assertEquals(GpuPages.roundUp(allocation), range.address());
            assertEquals(GpuPages.roundUp(size), range.sizeBytes());
            assertTrue(range.end() <= allocation + allocationSize, () -> "range " + range + " leaves the allocation");
            assertTrue(range.contains(range.address(), size));
        }
    }

    @Test
    void alignedInsideSaysHowMuchToAllocateWhenItDoesNotFit() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> GpuPages.alignedInside(BASE + 256, GPU_PAGE_SIZE, 8));
        assertTrue(e.getMessage().contains("GpuPages.overAllocationBytes(8) = 131072"), e.getMessage());
    }

    @Test
    void exactlyOnePageAtAnAlignedAddressNeedsNoSlack() {
        GpuPageRange range = GpuPages.alignedInside(BASE, GPU_PAGE_SIZE, GPU_PAGE_SIZE);
        assertEquals(new GpuPageRange(BASE, GPU_PAGE_SIZE), range);
        assertEquals(1, range.pageCount());
    }

    @Test
    void coveringTakesEveryTouchedPage() {
        assertEquals(new GpuPageRange(BASE, GPU_PAGE_SIZE), GpuPages.covering(BASE + 8, 8));
        assertEquals(new GpuPageRange(BASE, 2 * GPU_PAGE_SIZE), GpuPages.covering(BASE + GPU_PAGE_SIZE - 4, 8));
        assertEquals(new GpuPageRange(BASE, GPU_PAGE_SIZE), GpuPages.covering(BASE, GPU_PAGE_SIZE));
        assertEquals(new GpuPageRange(BASE, GPU_PAGE_SIZE), GpuPages.covering(BASE, 1));
    }

    @Test
    void overflowAndNonsenseAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> GpuPages.roundUp(Long.MAX_VALUE));
        assertThrows(IllegalArgumentException.class, () -> GpuPages.roundUp(Long.MAX_VALUE - GPU_PAGE_SIZE + 2));
        assertThrows(IllegalArgumentException.class, () -> GpuPages.roundUp(-1));
        assertThrows(IllegalArgumentException.class, () -> GpuPages.roundDown(-1));
        assertThrows(IllegalArgumentException.class, () -> GpuPages.overAllocationBytes(Long.MAX_VALUE));
        assertThrows(IllegalArgumentException.class,
                () -> GpuPages.overAllocationBytes(Long.MAX_VALUE - GPU_PAGE_SIZE));
        assertThrows(IllegalArgumentException.class, () -> GpuPages.overAllocationBytes(0));
        assertThrows(IllegalArgumentException.class, () -> GpuPages.overAllocationBytes(-5));
        assertThrows(IllegalArgumentException.class, () -> GpuPages.covering(Long.MAX_VALUE - 4, 8));
        assertThrows(IllegalArgumentException.class, () -> GpuPages.alignedInside(Long.MAX_VALUE - 4, 8, 8));
        assertThrows(IllegalArgumentException.class, () -> new GpuPageRange(BASE + 1, GPU_PAGE_SIZE));
        assertThrows(IllegalArgumentException.class, () -> new GpuPageRange(BASE, 0));
    }

    @Test
    void largestRoundableValue() {
        long largest = Long.MAX_VALUE - GpuPages.GPU_PAGE_OFFSET;
        assertEquals(Long.MAX_VALUE & GpuPages.GPU_PAGE_MASK, GpuPages.roundUp(largest));
    }
}
