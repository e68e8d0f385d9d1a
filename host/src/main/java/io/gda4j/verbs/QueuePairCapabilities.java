package io.gda4j.verbs;

/**
 * {@code struct ibv_qp_cap}: queue depths and limits asked of, or granted by, {@code ibv_create_qp}.
 *
 * @param maxSendWr     send queue depth in work requests (the mlx5 SQ holds at least this many WQEBBs)
 * @param maxRecvWr     receive queue depth
 * @param maxSendSge    data segments per send WQE
 * @param maxRecvSge    scatter entries per receive WQE
 * @param maxInlineData largest inline payload, bytes
 */
public record QueuePairCapabilities(int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge,
                                    int maxInlineData) {

    /** A send-only RC QP of {@code sendDepth} WQEs with one SGE and {@code maxInlineData} bytes inline. */
    public static QueuePairCapabilities sendOnly(int sendDepth, int maxInlineData) {
        return new QueuePairCapabilities(sendDepth, 1, 1, 1, maxInlineData);
    }
}
