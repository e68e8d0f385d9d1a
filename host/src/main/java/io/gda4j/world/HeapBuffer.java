package io.gda4j.world;

/**
 * A region of the symmetric heap: the same offset and size on every rank.
 *
 * @param offset    bytes from the heap base
 * @param sizeBytes length
 */
public record HeapBuffer(long offset, long sizeBytes) {
    public HeapBuffer {
        if (offset < 0 || sizeBytes < 0) {
            throw new IllegalArgumentException("heap buffer offset and size must be >= 0, got " + offset + ", " + sizeBytes);
        }
    }

    /** Offset one past the end. */
    public long end() {
        return offset + sizeBytes;
    }

    /** Offset of the {@code index}-th 64-bit word, for a buffer of signals. */
    public long word(int index) {
        long off = offset + 8L * index;
        if (index < 0 || off + 8 > end()) {
            throw new IndexOutOfBoundsException("signal word " + index + " outside a buffer of " + sizeBytes / 8 + " words");
        }
        return off;
    }
}
