package io.gda4j.nic;

import java.util.Set;

/**
 * Memory registered with a {@link Nic} (an {@code ibv_mr}): data segments name it by {@link #lkey()}, peers by
 * {@link #rkey()}. A WQE's address is checked against {@code [address, address + lengthBytes)}. Closing
 * deregisters it; WQEs that still name its keys then complete with a protection or access error, on both NICs.
 */
public interface NicMemory extends AutoCloseable {
    /** The first address of the region as WQEs give it (the iova: for GPU memory the device pointer). */
    long address();

    /** Length in bytes; {@link #isNull() null} regions report 0 (they have no addressable range). */
    long lengthBytes();

    /** The key local data segments use. */
    int lkey();

    /** The key a peer puts in its remote-address segment; 0 for the null region. */
    int rkey();

    Set<NicAccess> access();

    /**
     * True for the null region ({@code ibv_alloc_null_mr}): a data segment with its lkey is accepted for any
     * address and length; writes through it are dropped and reads return zeros. The PCIe flush uses it for the
     * fetched value of its atomic.
     */
    boolean isNull();

    /** Whether the NIC's writes into this region may become visible out of order ({@link NicAccess#RELAXED_ORDERING}). */
    default boolean relaxedOrdering() {
        return access().contains(NicAccess.RELAXED_ORDERING);
    }

    /** For messages, e.g. {@code "rank 1 heap"}. */
    String label();

    /** Deregisters; idempotent. */
    @Override
    void close();

    /** True when {@code [addr, addr + length)} lies inside the region (always true for a null region). */
    default boolean contains(long addr, long length) {
        if (isNull()) {
            return true;
        }
        long start = address();
        return length >= 0 && addr >= start && addr - start <= lengthBytes() - length;
    }
}
