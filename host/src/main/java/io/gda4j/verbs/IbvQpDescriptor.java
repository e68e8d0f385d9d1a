package io.gda4j.verbs;

/**
 * {@code struct ibv_qp} (verbs.h), allocated by the provider:
 * {@code 0 context*, 8 qp_context*, 16 pd*, 24 send_cq*, 32 recv_cq*, 40 srq*, 48 handle, 52 qp_num, 56 state,
 * 60 qp_type, ...}. {@code qp_num} is the 24-bit QP number the peer needs and the WQE ctrl segments carry.
 */
public final class IbvQpDescriptor {
    public static final int CONTEXT_OFFSET = 0;
    public static final int QP_NUM_OFFSET = 52;
    public static final int STATE_OFFSET = 56;
    public static final int QP_TYPE_OFFSET = 60;

    private IbvQpDescriptor() {
    }
}
