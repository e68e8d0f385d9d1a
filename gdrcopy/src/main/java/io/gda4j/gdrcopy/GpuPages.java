package io.gda4j.gdrcopy;

/**
 * GPU page arithmetic for gdr_pin_buffer, which pins whole 64 KiB GPU pages ({@code GPU_PAGE_SHIFT} 16 in
 * gdrapi.h). Addresses and sizes are non-negative {@code long}s; anything that would overflow is refused with an
 * {@link IllegalArgumentException}.
 *
 * <p>The usual recipe (the one gdrcopy's own tests follow): {@code cuMemAlloc} {@link #overAllocationBytes(long)}
 * bytes, round the returned address up with {@link #roundUp(long)}, and pin {@code roundUp(sizeBytes)} bytes from
 * there; {@link #alignedInside(long, long, long)} does that and checks it fits.
 */
public final class GpuPages {

    /** log2 of the GPU page size, as in gdrapi.h. */
    public static final int GPU_PAGE_SHIFT = 16;
    /** 64 KiB. */
    public static final long GPU_PAGE_SIZE = 1L << GPU_PAGE_SHIFT;
    /** Mask of the offset inside a page ({@code GPU_PAGE_OFFSET} in gdrapi.h). */
    public static final long GPU_PAGE_OFFSET = GPU_PAGE_SIZE - 1;
    /** Mask of the page bits ({@code GPU_PAGE_MASK} in gdrapi.h). */
    public static final long GPU_PAGE_MASK = ~GPU_PAGE_OFFSET;

    private GpuPages() {
    }

    /** Whether {@code value} is a multiple of 64 KiB. */
    public static boolean isAligned(long value) {
        return (value & GPU_PAGE_OFFSET) == 0;
    }

    /** Start of the page holding {@code address}. */
    public static long roundDown(long address) {
        requireNonNegative("address", address);
        return address & GPU_PAGE_MASK;
    }

    /** The smallest multiple of 64 KiB that is {@code >= value}. */
    public static long roundUp(long value) {
        requireNonNegative("value", value);
        if (value > Long.MAX_VALUE - GPU_PAGE_OFFSET) {
            throw new IllegalArgumentException(String.format(
                    "0x%x cannot be rounded up to a 64 KiB GPU page without overflowing", value));
        }
        return (value + GPU_PAGE_OFFSET) & GPU_PAGE_MASK;
    }

    /**
     * How many bytes to {@code cuMemAlloc} so that, after rounding the returned address up to a GPU page,
     * {@code roundUp(sizeBytes)} whole pages still lie inside the allocation: {@code roundUp(sizeBytes)} plus one
     * page (rounding the address up loses less than one page).
     */
    public static long overAllocationBytes(long sizeBytes) {
        requirePositive(sizeBytes);
        long pages = roundUp(sizeBytes);
        if (pages > Long.MAX_VALUE - GPU_PAGE_SIZE) {
            throw new IllegalArgumentException(
                    "over-allocating " + sizeBytes + " bytes by one 64 KiB GPU page overflows a long");
        }
        return pages + GPU_PAGE_SIZE;
    }

    /**
     * The pages to pin for {@code sizeBytes} inside the allocation {@code [allocationAddress,
     * allocationAddress + allocationSizeBytes)}: starting at {@code roundUp(allocationAddress)}, {@code
     * roundUp(sizeBytes)} long.
     *
     * @throws IllegalArgumentException when those pages do not fit in the allocation (it was not over-allocated)
     */
    public static GpuPageRange alignedInside(long allocationAddress, long allocationSizeBytes, long sizeBytes) {
        requireNonNegative("allocationAddress", allocationAddress);
        requireNonNegative("allocationSizeBytes", allocationSizeBytes);
        requirePositive(sizeBytes);
        if (allocationAddress > Long.MAX_VALUE - allocationSizeBytes) {
            throw new IllegalArgumentException(String.format(
                    "allocation 0x%x + %d overflows a 64-bit address", allocationAddress, allocationSizeBytes));
        }
        long start = roundUp(allocationAddress);
        long pinned = roundUp(sizeBytes);
        long allocationEnd = allocationAddress + allocationSizeBytes;
        if (start > allocationEnd || pinned > allocationEnd - start) {
            throw new IllegalArgumentException(String.format(
                    "%d bytes of whole 64 KiB GPU pages do not fit in the allocation [0x%x, 0x%x) once its start is "
                            + "rounded up to 0x%x: allocate GpuPages.overAllocationBytes(%d) = %d bytes",
                    pinned, allocationAddress, allocationEnd, start, sizeBytes, overAllocationBytes(sizeBytes)));
        }
        return new GpuPageRange(start, pinned);
    }

    /**
     * The pages holding {@code [address, address + sizeBytes)}: what gdrdrv pins when handed an unaligned range.
     * They must all lie inside one device allocation for the pin to succeed.
     */
    public static GpuPageRange covering(long address, long sizeBytes) {
        requireNonNegative("address", address);
        requirePositive(sizeBytes);
        if (address > Long.MAX_VALUE - sizeBytes) {
            throw new IllegalArgumentException(String.format(
                    "range 0x%x + %d overflows a 64-bit address", address, sizeBytes));
        }
        long start = roundDown(address);
        return new GpuPageRange(start, roundUp(address + sizeBytes) - start);
    }

    private static void requireNonNegative(String what, long value) {
        if (value < 0) {
            throw new IllegalArgumentException(what + " must not be negative, got " + value);
        }
    }

    private static void requirePositive(long sizeBytes) {
        if (sizeBytes <= 0) {
            throw new IllegalArgumentException("sizeBytes must be positive, got " + sizeBytes);
        }
    }
}
