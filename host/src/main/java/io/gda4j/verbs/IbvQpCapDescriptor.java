package io.gda4j.verbs;

/**
 * {@code struct ibv_qp_cap} (verbs.h), embedded in {@code ibv_qp_init_attr} and {@code ibv_qp_attr}; all u32.
 * <pre>
 *   0 max_send_wr   4 max_recv_wr   8 max_send_sge   12 max_recv_sge   16 max_inline_data   20 end
 * </pre>
 */
public final class IbvQpCapDescriptor {
    public static final int SIZE = 20;
    public static final int MAX_SEND_WR_OFFSET = 0;
    public static final int MAX_RECV_WR_OFFSET = 4;
    public static final int MAX_SEND_SGE_OFFSET = 8;
    public static final int MAX_RECV_SGE_OFFSET = 12;
    public static final int MAX_INLINE_DATA_OFFSET = 16;

    private IbvQpCapDescriptor() {
    }
}
