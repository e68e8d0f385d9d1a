package io.gda4j.world;

/**
 * Allocation plan of the symmetric heap: every rank has a heap of the same size, so one bump allocator hands out
 * offsets valid everywhere (the NVSHMEM model). Allocation is a set-up operation and is not thread-safe across
 * callers that do not synchronise.
 */
public final class SymmetricHeap {
    private final long sizeBytes;
    private long next;

    public SymmetricHeap(long sizeBytes) {
        this.sizeBytes = sizeBytes;
    }

    public long sizeBytes() {
        return sizeBytes;
    }

    /** Bytes not yet handed out. */
    public synchronized long freeBytes() {
        return sizeBytes - next;
    }

    /** Reserves {@code sizeBytes} aligned to {@code alignment} (a power of two) on every rank. */
    public synchronized HeapBuffer allocate(long sizeBytes, long alignment) {
        if (sizeBytes < 0) {
            throw new IllegalArgumentException("allocation size must be >= 0, got " + sizeBytes);
        }
        if (alignment <= 0 || Long.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("alignment must be a power of two, got " + alignment);
        }
        long offset = (next + alignment - 1) & -alignment;
        if (offset > this.sizeBytes || sizeBytes > this.sizeBytes - offset) {
            throw new IllegalStateException("symmetric heap exhausted: asked for " + ByteSize.format(sizeBytes) + " with "
                    + ByteSize.format(this.sizeBytes - Math.min(next, this.sizeBytes)) + " of " + ByteSize.format(this.sizeBytes)
                    + " left; raise the heap size (" + WorldConfig.HEAP_SIZE_ENV + " or -D" + WorldConfig.HEAP_SIZE_PROP_NAME + ")");
        }
        next = offset + sizeBytes;
        return new HeapBuffer(offset, sizeBytes);
    }

    /** Reserves 256-byte-aligned space (good for vector copies). */
    public HeapBuffer allocate(long sizeBytes) {
        return allocate(sizeBytes, 256);
    }

    /** Reserves {@code count} 64-bit signal words, on their own 128-byte line so they share no cache line with data. */
    public HeapBuffer allocateSignals(int count) {
        return allocate(Math.max(128, 8L * count), 128);
    }

    /** Checks that [offset, offset + bytes) lies in the heap, naming {@code what} in the message. */
    public void checkRange(String what, long offset, long bytes) {
        if (offset < 0 || bytes < 0 || offset > sizeBytes || bytes > sizeBytes - offset) {
            throw new IllegalArgumentException(what + " [" + offset + ", " + offset + " + " + bytes
                    + ") lies outside the symmetric heap of " + sizeBytes + " bytes (" + ByteSize.format(sizeBytes) + ")");
        }
    }
}
