package io.gda4j.nic.mlx5;

/**
 * A range of whole host pages {@code [start, end)}: what {@code cuMemHostRegister} pins and maps, and what
 * {@code cuMemGetHandleForAddressRange} exports ("dptr and size must be aligned to the host page size", cuda.h).
 * The objects libmlx5 allocates (send queue, doorbell records, CQ ring, UAR register) start and end anywhere in
 * a page, so every registration rounds its object out to the pages around it.
 *
 * @param start first byte, page aligned
 * @param end   one past the last byte, page aligned, greater than {@code start}
 */
record PageRange(long start, long end) {
    PageRange {
        if (Long.compareUnsigned(start, end) >= 0) {
            throw new IllegalArgumentException(String.format("empty page range [0x%x, 0x%x)", start, end));
        }
    }

    /**
     * The pages that hold {@code [address, address + lengthBytes)}: the start rounded down and the end rounded up
     * to {@code pageSize}, a power of two.
     */
    static PageRange around(long address, long lengthBytes, long pageSize) {
        if (pageSize <= 0 || Long.bitCount(pageSize) != 1) {
            throw new IllegalArgumentException("the page size must be a power of two, not " + pageSize);
        }
        if (address == 0 || lengthBytes < 1) {
            throw new IllegalArgumentException(String.format("cannot map [0x%x, +%d)", address, lengthBytes));
        }
        long last = address + lengthBytes - 1;
        if (Long.compareUnsigned(last, address) < 0 || Long.compareUnsigned(last | (pageSize - 1), -1L) == 0) {
            throw new IllegalArgumentException(String.format("[0x%x, +%d) wraps around the address space", address,
                    lengthBytes));
        }
        long mask = -pageSize;
        return new PageRange(address & mask, (last & mask) + pageSize);
    }

    long lengthBytes() {
        return end - start;
    }

    /** Whether every byte of {@code other} is in this range. */
    boolean contains(PageRange other) {
        return Long.compareUnsigned(other.start, start) >= 0 && Long.compareUnsigned(other.end, end) <= 0;
    }

    /** Whether {@code address} is in this range. */
    boolean contains(long address) {
        return Long.compareUnsigned(address, start) >= 0 && Long.compareUnsigned(address, end) < 0;
    }

    /** Whether the two ranges share at least one byte. */
    boolean overlaps(PageRange other) {
        return Long.compareUnsigned(other.start, end) < 0 && Long.compareUnsigned(start, other.end) < 0;
    }

    @Override
    public String toString() {
        return String.format("[0x%x, +%d)", start, end - start);
    }
}
