package io.gda4j.verbs;

/**
 * {@code struct ibv_wc} (verbs.h), one completion that {@code ibv_poll_cq} fills:
 * <pre>
 *  0 wr_id   8 status   12 opcode   16 vendor_err   20 byte_len   24 imm_data   28 qp_num   32 src_qp
 * 36 wc_flags   40 pkey_index   42 slid   44 sl   45 dlid_path_bits   48 end
 * </pre>
 * Offsets are checked against the installed header by {@code VerbsLayoutTest}.
 */
public final class IbvWcDescriptor {
    public static final int SIZE = 48;
    public static final int WR_ID_OFFSET = 0;
    public static final int STATUS_OFFSET = 8;
    public static final int OPCODE_OFFSET = 12;
    public static final int VENDOR_ERR_OFFSET = 16;
    public static final int BYTE_LEN_OFFSET = 20;
    public static final int QP_NUM_OFFSET = 28;

    private IbvWcDescriptor() {
    }
}
