package io.gda4j.world;

import java.util.Map;
import java.util.TreeMap;

/**
 * Allocation plan of the symmetric heap: every rank has a heap of the same size, so one plan hands out offsets valid
 * everywhere (the NVSHMEM model). Allocation takes the lowest free range that fits (first fit) and {@link #free}
 * merges a region back with its free neighbours, so the plan is a function of the sequence of calls alone: every
 * process that makes the same allocations and frees in the same order gets the same offsets. Allocation is a set-up
 * operation; the methods are synchronized, but callers that allocate from several threads get offsets in whatever
 * order the threads arrive, so processes must not.
 */
public final class SymmetricHeap {
    private final long sizeBytes;
    /** Free ranges, offset to length, never adjacent (free merges them). */
    private final TreeMap<Long, Long> free = new TreeMap<>();
    /** Regions handed out and not freed, offset to length (zero-length regions are not tracked). */
    private final TreeMap<Long, Long> allocated = new TreeMap<>();

    public SymmetricHeap(long sizeBytes) {
        if (sizeBytes < 0) {
            throw new IllegalArgumentException("heap size must be >= 0, got " + sizeBytes);
        }
        this.sizeBytes = sizeBytes;
        if (sizeBytes > 0) {
            free.put(0L, sizeBytes);
        }
    }

    public long sizeBytes() {
        return sizeBytes;
    }

    /** Bytes not handed out (possibly in several ranges: see {@link #largestFreeBytes()}). */
    public synchronized long freeBytes() {
        long sum = 0;
        for (long length : free.values()) {
            sum += length;
        }
        return sum;
    }

    /** The longest free range, the largest allocation that can succeed with an alignment of 1. */
    public synchronized long largestFreeBytes() {
        long max = 0;
        for (long length : free.values()) {
            max = Math.max(max, length);
        }
        return max;
    }

    /** Reserves {@code sizeBytes} aligned to {@code alignment} (a power of two) on every rank. */
    public synchronized HeapBuffer allocate(long sizeBytes, long alignment) {
        if (sizeBytes < 0) {
            throw new IllegalArgumentException("allocation size must be >= 0, got " + sizeBytes);
        }
        if (alignment <= 0 || Long.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("alignment must be a power of two, got " + alignment);
        }
        for (Map.Entry<Long, Long> range : free.entrySet()) {
            long start = range.getKey();
            long end = start + range.getValue();
            long offset = (start + alignment - 1) & -alignment;
            if (offset < start || offset > end || sizeBytes > end - offset) {
                continue;
            }
            if (sizeBytes == 0) {
                return new HeapBuffer(offset, 0);
            }
            free.remove(start);
            if (offset > start) {
                free.put(start, offset - start);
            }
            if (offset + sizeBytes < end) {
                free.put(offset + sizeBytes, end - offset - sizeBytes);
            }
            allocated.put(offset, sizeBytes);
            return new HeapBuffer(offset, sizeBytes);
        }
        if (sizeBytes == 0) {
            // A full heap still has an empty region to give: its end.
            return new HeapBuffer(this.sizeBytes, 0);
        }
        long left = freeBytes();
        long largest = largestFreeBytes();
        throw new IllegalStateException("symmetric heap exhausted: asked for " + ByteSize.format(sizeBytes) + " with "
                + ByteSize.format(left) + " of " + ByteSize.format(this.sizeBytes) + " left"
                + (largest < left ? " (the longest free range " + ByteSize.format(largest) + ")" : "")
                + "; raise the heap size (" + WorldConfig.HEAP_SIZE_ENV + " or -D" + WorldConfig.HEAP_SIZE_PROP_NAME
                + "), or close what holds heap regions you no longer use");
    }

    /** Reserves 256-byte-aligned space (good for vector copies). */
    public HeapBuffer allocate(long sizeBytes) {
        return allocate(sizeBytes, 256);
    }

    /** Reserves {@code count} 64-bit signal words, on their own 128-byte line so they share no cache line with data. */
    public HeapBuffer allocateSignals(int count) {
        return allocate(Math.max(128, 8L * count), 128);
    }

    /**
     * Returns {@code region}, which {@link #allocate} handed out, to the plan; a later allocation may reuse its bytes.
     * Every process frees the same regions in the same order (so the plans stay the same everywhere), and only once
     * no kernel of any rank still reads or writes the region: peers write into each other's heaps, so a process that
     * reuses a region it freed must first know that the other processes' kernels on it have finished (a
     * {@link World#barrier()} after each process waited for its own). A region of length 0 needs no free (it is a
     * no-op).
     *
     * @throws IllegalArgumentException when {@code region} was not handed out by this heap, or was freed already
     */
    public synchronized void free(HeapBuffer region) {
        if (region.sizeBytes() == 0) {
            return;
        }
        Long length = allocated.get(region.offset());
        if (length == null || length != region.sizeBytes()) {
            throw new IllegalArgumentException("heap region [" + region.offset() + ", " + region.end() + ") is not"
                    + " allocated in this heap: it was freed already, or another heap handed it out");
        }
        allocated.remove(region.offset());
        long start = region.offset();
        long end = region.end();
        Map.Entry<Long, Long> before = free.floorEntry(start);
        if (before != null && before.getKey() + before.getValue() == start) {
            start = before.getKey();
            free.remove(start);
        }
        Long after = free.get(end);
        if (after != null) {
            free.remove(end);
            end += after;
        }
        free.put(start, end - start);
    }

    /** Checks that [offset, offset + bytes) lies in the heap, naming {@code what} in the message. */
    public void checkRange(String what, long offset, long bytes) {
        if (offset < 0 || bytes < 0 || offset > sizeBytes || bytes > sizeBytes - offset) {
            throw new IllegalArgumentException(what + " [" + offset + ", " + offset + " + " + bytes
                    + ") lies outside the symmetric heap of " + sizeBytes + " bytes (" + ByteSize.format(sizeBytes) + ")");
        }
    }
}
