package io.gda4j.nic;

/**
 * What a {@link Nic} offers, for sizing QPs and choosing the flush.
 *
 * @param maxSqWqebbs      largest send queue in WQEBBs ({@code max_qp_wr}, rounded down to a power of two)
 * @param maxCqEntries     largest CQ ({@code max_cqe})
 * @param maxInlineBytes   largest inline WRITE payload a QP can be created with
 * @param atomics          8-byte RDMA atomics (fetch-add, compare-swap) are supported
 * @param nullMemory       {@link Nic#nullMemory()} is supported
 * @param writesMayPassCqe GPUDirect writes by this NIC may become visible to the GPU after the CQE that reports
 *                         them (PCIe relaxed ordering, some platforms): then {@code quiet} must end with the PCIe
 *                         flush. For the emulated NIC: its writes-pass-CQE mode.
 * @param relaxedOrdering  memory is registered with relaxed ordering: this NIC's writes into a target's memory may
 *                         become visible out of order, so an 8-byte WRITE used as a signal could overtake the data
 *                         before it (an atomic cannot: it reads the word, and a read does not pass earlier writes).
 *                         Whether one region is written so is its own registration's
 *                         ({@link NicMemory#relaxedOrdering()}): a poster asks the target's, not its own NIC's.
 * @param dataDirect       the NIC's writes into GPU memory do not take the GPUDirect RDMA path that
 *                         {@code CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING} speaks for (a data-direct NIC,
 *                         which DMAs through a PCIe function of its own; the emulated NIC, whose writes are CUDA
 *                         copies): that attribute cannot waive the flush, so where {@code writesMayPassCqe} holds,
 *                         quiet must flush (NVSHMEM forces its flush on data-direct NICs for the same reason)
 */
public record NicCapabilities(int maxSqWqebbs, int maxCqEntries, int maxInlineBytes, boolean atomics,
                              boolean nullMemory, boolean writesMayPassCqe, boolean relaxedOrdering,
                              boolean dataDirect) {
    /** A NIC whose writes take the GPUDirect RDMA path (not data-direct). */
    public NicCapabilities(int maxSqWqebbs, int maxCqEntries, int maxInlineBytes, boolean atomics,
                           boolean nullMemory, boolean writesMayPassCqe, boolean relaxedOrdering) {
        this(maxSqWqebbs, maxCqEntries, maxInlineBytes, atomics, nullMemory, writesMayPassCqe, relaxedOrdering,
                false);
    }
}
