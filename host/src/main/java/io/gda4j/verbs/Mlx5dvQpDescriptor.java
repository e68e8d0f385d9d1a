package io.gda4j.verbs;

/**
 * {@code struct mlx5dv_qp} (mlx5dv.h), filled by {@code mlx5dv_init_obj}: where the QP's queues, doorbell record
 * and doorbell register live. {@code comp_mask} is also an input (which optional fields to fill); gda4j passes 0.
 * <pre>
 *   0 dbrec* (__be32[2])   8 sq.buf*   16 sq.wqe_cnt   20 sq.stride   24 rq.buf*   32 rq.wqe_cnt   36 rq.stride
 *  40 bf.reg* (UAR / BlueFlame register)   48 bf.size   56 comp_mask (u64)   64 uar_mmap_offset ... 96 end
 * </pre>
 */
public final class Mlx5dvQpDescriptor {
    public static final int SIZE = 96;
    public static final int DBREC_OFFSET = 0;
    public static final int SQ_BUF_OFFSET = 8;
    public static final int SQ_WQE_CNT_OFFSET = 16;
    public static final int SQ_STRIDE_OFFSET = 20;
    public static final int RQ_BUF_OFFSET = 24;
    public static final int RQ_WQE_CNT_OFFSET = 32;
    public static final int RQ_STRIDE_OFFSET = 36;
    public static final int BF_REG_OFFSET = 40;
    public static final int BF_SIZE_OFFSET = 48;
    public static final int COMP_MASK_OFFSET = 56;

    private Mlx5dvQpDescriptor() {
    }
}
