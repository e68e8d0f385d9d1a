package io.gda4j.verbs;

/**
 * {@code struct ibv_port_attr} (verbs.h), filled by {@code ibv_query_port}.
 * <pre>
 *   0 state            4 max_mtu          8 active_mtu      12 gid_tbl_len
 *  16 port_cap_flags  20 max_msg_sz      24 bad_pkey_cntr  28 qkey_viol_cntr
 *  32 pkey_tbl_len(16) 34 lid (16)       36 sm_lid (16)    38 lmc, max_vl_num, sm_sl, subnet_timeout, init_type_reply
 *  43 active_width    44 active_speed    45 phys_state     46 link_layer      47 flags       (u8 each)
 *  48 port_cap_flags2 (16) ... 52 end
 * </pre>
 * The exported {@code ibv_query_port} symbol (what JNA binds) writes only the {@code _compat_ibv_port_attr} prefix,
 * i.e. the bytes before {@link #PORT_CAP_FLAGS2_OFFSET}; the header's inline wrapper of the same name reaches the
 * full struct through the context's ops. gda4j reads nothing past the prefix and zeroes the buffer first.
 */
public final class IbvPortAttrDescriptor {
    public static final int SIZE = 52;
    public static final int STATE_OFFSET = 0;
    public static final int MAX_MTU_OFFSET = 4;
    public static final int ACTIVE_MTU_OFFSET = 8;
    public static final int GID_TBL_LEN_OFFSET = 12;
    public static final int PORT_CAP_FLAGS_OFFSET = 16;
    public static final int MAX_MSG_SZ_OFFSET = 20;
    public static final int LID_OFFSET = 34;
    public static final int SM_LID_OFFSET = 36;
    public static final int ACTIVE_WIDTH_OFFSET = 43;
    public static final int ACTIVE_SPEED_OFFSET = 44;
    public static final int PHYS_STATE_OFFSET = 45;
    public static final int LINK_LAYER_OFFSET = 46;
    public static final int FLAGS_OFFSET = 47;
    /** First byte past what the exported (compat) {@code ibv_query_port} writes. */
    public static final int PORT_CAP_FLAGS2_OFFSET = 48;

    private IbvPortAttrDescriptor() {
    }
}
