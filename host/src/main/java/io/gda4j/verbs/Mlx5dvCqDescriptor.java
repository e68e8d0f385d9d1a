package io.gda4j.verbs;

/**
 * {@code struct mlx5dv_cq} (mlx5dv.h), filled by {@code mlx5dv_init_obj}.
 * <pre>
 *   0 buf*   8 dbrec* (__be32[2]: consumer index, arm)   16 cqe_cnt   20 cqe_size   24 cq_uar*   32 cqn
 *  40 comp_mask (u64)   48 end
 * </pre>
 */
public final class Mlx5dvCqDescriptor {
    public static final int SIZE = 48;
    public static final int BUF_OFFSET = 0;
    public static final int DBREC_OFFSET = 8;
    public static final int CQE_CNT_OFFSET = 16;
    public static final int CQE_SIZE_OFFSET = 20;
    public static final int CQ_UAR_OFFSET = 24;
    public static final int CQN_OFFSET = 32;
    public static final int COMP_MASK_OFFSET = 40;

    private Mlx5dvCqDescriptor() {
    }
}
