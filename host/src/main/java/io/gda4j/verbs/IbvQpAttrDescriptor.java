package io.gda4j.verbs;

/**
 * {@code struct ibv_qp_attr} (verbs.h), the input of {@code ibv_modify_qp}; which fields count is said by the
 * {@code IBV_QP_*} attribute mask.
 * <pre>
 *   0 qp_state        4 cur_qp_state    8 path_mtu       12 path_mig_state   16 qkey
 *  20 rq_psn         24 sq_psn         28 dest_qp_num    32 qp_access_flags  36 cap (ibv_qp_cap, 20 B)
 *  56 ah_attr (ibv_ah_attr, 32 B)      88 alt_ah_attr (32 B)
 * 120 pkey_index (u16)  122 alt_pkey_index (u16)  124 en_sqd_async_notify  125 sq_draining
 * 126 max_rd_atomic  127 max_dest_rd_atomic  128 min_rnr_timer  129 port_num  130 timeout  131 retry_cnt
 * 132 rnr_retry  133 alt_port_num  134 alt_timeout (u8 each)  136 rate_limit (u32)   144 end
 * </pre>
 */
public final class IbvQpAttrDescriptor {
    public static final int SIZE = 144;
    public static final int QP_STATE_OFFSET = 0;
    public static final int CUR_QP_STATE_OFFSET = 4;
    public static final int PATH_MTU_OFFSET = 8;
    public static final int QKEY_OFFSET = 16;
    public static final int RQ_PSN_OFFSET = 20;
    public static final int SQ_PSN_OFFSET = 24;
    public static final int DEST_QP_NUM_OFFSET = 28;
    public static final int QP_ACCESS_FLAGS_OFFSET = 32;
    public static final int CAP_OFFSET = 36;
    public static final int AH_ATTR_OFFSET = 56;
    public static final int PKEY_INDEX_OFFSET = 120;
    public static final int MAX_RD_ATOMIC_OFFSET = 126;
    public static final int MAX_DEST_RD_ATOMIC_OFFSET = 127;
    public static final int MIN_RNR_TIMER_OFFSET = 128;
    public static final int PORT_NUM_OFFSET = 129;
    public static final int TIMEOUT_OFFSET = 130;
    public static final int RETRY_CNT_OFFSET = 131;
    public static final int RNR_RETRY_OFFSET = 132;

    private IbvQpAttrDescriptor() {
    }

    /** Offset of {@code ah_attr.grh.<field>} given the field's offset in {@link IbvGlobalRouteDescriptor}. */
    public static int ahGrh(int globalRouteFieldOffset) {
        return AH_ATTR_OFFSET + IbvAhAttrDescriptor.GRH_OFFSET + globalRouteFieldOffset;
    }

    /** Offset of {@code ah_attr.<field>} given the field's offset in {@link IbvAhAttrDescriptor}. */
    public static int ah(int ahAttrFieldOffset) {
        return AH_ATTR_OFFSET + ahAttrFieldOffset;
    }
}
