package io.gda4j.gdrcopy;

/**
 * A range of whole 64 KiB GPU pages, {@code [address, address + sizeBytes)}: what gdr_pin_buffer pins.
 *
 * @param address   first byte, a multiple of {@link GpuPages#GPU_PAGE_SIZE}
 * @param sizeBytes a positive multiple of {@link GpuPages#GPU_PAGE_SIZE}
 */
public record GpuPageRange(long address, long sizeBytes) {

    public GpuPageRange {
        if (address < 0 || !GpuPages.isAligned(address)) {
            throw new IllegalArgumentException(String.format(
                    "page range start 0x%x is not a non-negative multiple of the 64 KiB GPU page", address));
        }
        if (sizeBytes <= 0 || !GpuPages.isAligned(sizeBytes)) {
            throw new IllegalArgumentException(
                    "page range size " + sizeBytes + " is not a positive multiple of the 64 KiB GPU page");
        }
        if (address > Long.MAX_VALUE - sizeBytes) {
            throw new IllegalArgumentException(String.format(
                    "page range 0x%x + %d overflows a 64-bit address", address, sizeBytes));
        }
    }

    /** One past the last byte. */
    public long end() {
        return address + sizeBytes;
    }

    /** Number of 64 KiB pages. */
    public long pageCount() {
        return sizeBytes >>> GpuPages.GPU_PAGE_SHIFT;
    }

    /** Whether {@code [otherAddress, otherAddress + otherSizeBytes)} lies inside this range. */
    public boolean contains(long otherAddress, long otherSizeBytes) {
        return otherAddress >= address && otherSizeBytes >= 0 && otherAddress - address <= sizeBytes - otherSizeBytes;
    }

    @Override
    public String toString() {
        return String.format("[0x%x, 0x%x) (%d GPU page%s)", address, end(), pageCount(), pageCount() == 1 ? "" : "s");
    }
}
