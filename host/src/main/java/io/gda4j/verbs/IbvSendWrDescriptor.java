package io.gda4j.verbs;

/**
 * {@code struct ibv_send_wr} (verbs.h), one work request handed to {@code ibv_post_send}, and the
 * {@code struct ibv_sge} its {@code sg_list} points at:
 * <pre>
 * ibv_send_wr   0 wr_id   8 next*   16 sg_list*   24 num_sge   28 opcode   32 send_flags   36 imm_data
 *               40 wr: rdma   { 40 remote_addr  48 rkey }
 *                      atomic { 40 remote_addr  48 compare_add  56 swap  64 rkey }
 *               ... 128 end
 * ibv_sge       0 addr   8 length   12 lkey   16 end
 * </pre>
 * Offsets are checked against the installed header by {@code VerbsLayoutTest}.
 */
public final class IbvSendWrDescriptor {
    public static final int SIZE = 128;
    public static final int WR_ID_OFFSET = 0;
    public static final int NEXT_OFFSET = 8;
    public static final int SG_LIST_OFFSET = 16;
    public static final int NUM_SGE_OFFSET = 24;
    public static final int OPCODE_OFFSET = 28;
    public static final int SEND_FLAGS_OFFSET = 32;
    public static final int IMM_DATA_OFFSET = 36;
    public static final int RDMA_REMOTE_ADDR_OFFSET = 40;
    public static final int RDMA_RKEY_OFFSET = 48;
    public static final int ATOMIC_REMOTE_ADDR_OFFSET = 40;
    public static final int ATOMIC_COMPARE_ADD_OFFSET = 48;
    public static final int ATOMIC_SWAP_OFFSET = 56;
    public static final int ATOMIC_RKEY_OFFSET = 64;

    public static final int SGE_SIZE = 16;
    public static final int SGE_ADDR_OFFSET = 0;
    public static final int SGE_LENGTH_OFFSET = 8;
    public static final int SGE_LKEY_OFFSET = 12;

    private IbvSendWrDescriptor() {
    }
}
