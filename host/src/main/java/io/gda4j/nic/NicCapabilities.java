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
 *                         flush. False for the emulated NIC, whose stream orders the CQE store after the copies.
 * @param relaxedOrdering  memory is registered with relaxed ordering: this NIC's writes into a target's memory may
 *                         become visible out of order, so an 8-byte WRITE used as a signal could overtake the data
 *                         before it (an atomic cannot: it reads the word, and a read does not pass earlier writes)
 */
public record NicCapabilities(int maxSqWqebbs, int maxCqEntries, int maxInlineBytes, boolean atomics,
                              boolean nullMemory, boolean writesMayPassCqe, boolean relaxedOrdering) {
}
