package io.gda4j.verbs;

/** The verbs.h enum values gda4j passes or reads; each is checked against the header by a test. */
public final class VerbsConstants {
    // enum ibv_qp_state
    public static final int IBV_QPS_RESET = 0;
    public static final int IBV_QPS_INIT = 1;
    public static final int IBV_QPS_RTR = 2;
    public static final int IBV_QPS_RTS = 3;
    public static final int IBV_QPS_SQD = 4;
    public static final int IBV_QPS_SQE = 5;
    public static final int IBV_QPS_ERR = 6;
    public static final int IBV_QPS_UNKNOWN = 7;

    // enum ibv_qp_type
    public static final int IBV_QPT_RC = 2;

    // enum ibv_qp_attr_mask
    public static final int IBV_QP_STATE = 1;
    public static final int IBV_QP_ACCESS_FLAGS = 1 << 3;
    public static final int IBV_QP_PKEY_INDEX = 1 << 4;
    public static final int IBV_QP_PORT = 1 << 5;
    public static final int IBV_QP_AV = 1 << 7;
    public static final int IBV_QP_PATH_MTU = 1 << 8;
    public static final int IBV_QP_TIMEOUT = 1 << 9;
    public static final int IBV_QP_RETRY_CNT = 1 << 10;
    public static final int IBV_QP_RNR_RETRY = 1 << 11;
    public static final int IBV_QP_RQ_PSN = 1 << 12;
    public static final int IBV_QP_MAX_QP_RD_ATOMIC = 1 << 13;
    public static final int IBV_QP_MIN_RNR_TIMER = 1 << 15;
    public static final int IBV_QP_SQ_PSN = 1 << 16;
    public static final int IBV_QP_MAX_DEST_RD_ATOMIC = 1 << 17;
    public static final int IBV_QP_DEST_QPN = 1 << 20;

    // enum ibv_access_flags
    public static final int IBV_ACCESS_LOCAL_WRITE = 1;
    public static final int IBV_ACCESS_REMOTE_WRITE = 1 << 1;
    public static final int IBV_ACCESS_REMOTE_READ = 1 << 2;
    public static final int IBV_ACCESS_REMOTE_ATOMIC = 1 << 3;
    /** Lets PCIe writes to the MR be reordered (faster GPUDirect on some platforms); an optional flag. */
    public static final int IBV_ACCESS_RELAXED_ORDERING = 1 << 20;
    /**
     * Optional access flags: a provider may ignore them. Registration with any of them set must go through
     * {@code ibv_reg_mr_iova2}, as the header's {@code ibv_reg_mr} macro does.
     */
    public static final int IBV_ACCESS_OPTIONAL_RANGE = 0x3ff00000;

    // enum ibv_mtu
    public static final int IBV_MTU_256 = 1;
    public static final int IBV_MTU_512 = 2;
    public static final int IBV_MTU_1024 = 3;
    public static final int IBV_MTU_2048 = 4;
    public static final int IBV_MTU_4096 = 5;

    // enum ibv_port_state
    public static final int IBV_PORT_NOP = 0;
    public static final int IBV_PORT_DOWN = 1;
    public static final int IBV_PORT_INIT = 2;
    public static final int IBV_PORT_ARMED = 3;
    public static final int IBV_PORT_ACTIVE = 4;
    public static final int IBV_PORT_ACTIVE_DEFER = 5;

    // IBV_LINK_LAYER_*
    public static final int IBV_LINK_LAYER_UNSPECIFIED = 0;
    public static final int IBV_LINK_LAYER_INFINIBAND = 1;
    public static final int IBV_LINK_LAYER_ETHERNET = 2;

    // enum ibv_wr_opcode, enum ibv_send_flags: what the host poster hands ibv_post_send
    public static final int IBV_WR_RDMA_WRITE = 0;
    public static final int IBV_WR_RDMA_READ = 4;
    public static final int IBV_WR_ATOMIC_CMP_AND_SWP = 5;
    public static final int IBV_WR_ATOMIC_FETCH_AND_ADD = 6;
    public static final int IBV_SEND_FENCE = 1;
    public static final int IBV_SEND_SIGNALED = 1 << 1;
    public static final int IBV_SEND_INLINE = 1 << 3;

    // enum ibv_wc_status: what ibv_poll_cq reports (mlx5's syndrome for each: WorkCompletions)
    public static final int IBV_WC_SUCCESS = 0;
    public static final int IBV_WC_LOC_LEN_ERR = 1;
    public static final int IBV_WC_LOC_QP_OP_ERR = 2;
    public static final int IBV_WC_LOC_PROT_ERR = 4;
    public static final int IBV_WC_WR_FLUSH_ERR = 5;
    public static final int IBV_WC_MW_BIND_ERR = 6;
    public static final int IBV_WC_BAD_RESP_ERR = 7;
    public static final int IBV_WC_LOC_ACCESS_ERR = 8;
    public static final int IBV_WC_REM_INV_REQ_ERR = 9;
    public static final int IBV_WC_REM_ACCESS_ERR = 10;
    public static final int IBV_WC_REM_OP_ERR = 11;
    public static final int IBV_WC_RETRY_EXC_ERR = 12;
    public static final int IBV_WC_RNR_RETRY_EXC_ERR = 13;
    public static final int IBV_WC_REM_ABORT_ERR = 16;
    public static final int IBV_WC_GENERAL_ERR = 21;

    /** The bindings pass pointers and size_t as Java longs: LP64 only. */
    public static final int POINTER_SIZE = 8;
    public static final int SIZE_T_SIZE = 8;

    private VerbsConstants() {
    }

    /** {@code "RTS"} for {@link #IBV_QPS_RTS}, and so on. */
    public static String qpStateName(int state) {
        return switch (state) {
            case IBV_QPS_RESET -> "RESET";
            case IBV_QPS_INIT -> "INIT";
            case IBV_QPS_RTR -> "RTR";
            case IBV_QPS_RTS -> "RTS";
            case IBV_QPS_SQD -> "SQD";
            case IBV_QPS_SQE -> "SQE";
            case IBV_QPS_ERR -> "ERR";
            default -> "UNKNOWN(" + state + ")";
        };
    }

    /** Bytes of an {@code IBV_MTU_*} value (256 for {@link #IBV_MTU_256}), or -1. */
    public static int mtuBytes(int mtu) {
        return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128 << mtu : -1;
    }

    /** {@code "ACTIVE"} for {@link #IBV_PORT_ACTIVE}, and so on. */
    public static String portStateName(int state) {
        return switch (state) {
            case IBV_PORT_NOP -> "NOP";
            case IBV_PORT_DOWN -> "DOWN";
            case IBV_PORT_INIT -> "INIT";
            case IBV_PORT_ARMED -> "ARMED";
            case IBV_PORT_ACTIVE -> "ACTIVE";
            case IBV_PORT_ACTIVE_DEFER -> "ACTIVE_DEFER";
            default -> "UNKNOWN(" + state + ")";
        };
    }

    /** {@code "InfiniBand"}, {@code "Ethernet"} (RoCE) or {@code "unspecified"}. */
    public static String linkLayerName(int linkLayer) {
        return switch (linkLayer) {
            case IBV_LINK_LAYER_INFINIBAND -> "InfiniBand";
            case IBV_LINK_LAYER_ETHERNET -> "Ethernet";
            default -> "unspecified";
        };
    }
}
