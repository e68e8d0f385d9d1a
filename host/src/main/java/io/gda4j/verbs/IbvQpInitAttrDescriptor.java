package io.gda4j.verbs;

/**
 * {@code struct ibv_qp_init_attr} (verbs.h), the input of {@code ibv_create_qp}; the provider writes the granted
 * capabilities back into {@code cap}.
 * <pre>
 *   0 qp_context*   8 send_cq*   16 recv_cq*   24 srq*   32 cap (ibv_qp_cap, 20 B)   52 qp_type   56 sq_sig_all
 *  64 end
 * </pre>
 */
public final class IbvQpInitAttrDescriptor {
    public static final int SIZE = 64;
    public static final int QP_CONTEXT_OFFSET = 0;
    public static final int SEND_CQ_OFFSET = 8;
    public static final int RECV_CQ_OFFSET = 16;
    public static final int SRQ_OFFSET = 24;
    public static final int CAP_OFFSET = 32;
    public static final int QP_TYPE_OFFSET = 52;
    public static final int SQ_SIG_ALL_OFFSET = 56;

    private IbvQpInitAttrDescriptor() {
    }
}
