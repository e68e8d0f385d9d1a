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
 * @param gpuDirectWrites  this NIC writes into GPU memory by GPUDirect RDMA over PCIe, so what the GPU reports for
 *                         such writes ({@code CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING}) holds for them;
 *                         false for the emulated NIC, whose writes are CUDA copies, and for a data-direct NIC, which
 *                         DMAs through a PCIe function of its own: that attribute cannot waive their flush (NVSHMEM
 *                         forces the flush on data-direct NICs for the same reason)
 * @param processLinks     QPs can be connected to a rank of another process of this host without a network (the
 *                         emulated NIC, through CUDA IPC: {@code EmulatedNic.createQpToProcess})
 */
public record NicCapabilities(int maxSqWqebbs, int maxCqEntries, int maxInlineBytes, boolean atomics,
                              boolean nullMemory, boolean writesMayPassCqe, boolean relaxedOrdering,
                              boolean gpuDirectWrites, boolean processLinks) {
}
