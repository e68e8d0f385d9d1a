package io.gda4j.verbs;

/**
 * {@code struct mlx5dv_obj} (mlx5dv.h), the argument of {@code mlx5dv_init_obj}: pairs of (verbs object in,
 * mlx5dv struct out) for the object types named in the type mask. gda4j uses the QP and CQ pairs.
 * <pre>
 *   0 qp.in*   8 qp.out*   16 cq.in*   24 cq.out*   32 srq   48 rwq   64 dm   80 ah   96 pd   112 end
 * </pre>
 */
public final class Mlx5dvObjDescriptor {
    public static final int SIZE = 112;
    public static final int QP_IN_OFFSET = 0;
    public static final int QP_OUT_OFFSET = 8;
    public static final int CQ_IN_OFFSET = 16;
    public static final int CQ_OUT_OFFSET = 24;
    /** {@code MLX5DV_OBJ_QP}. */
    public static final int OBJ_QP = 1;
    /** {@code MLX5DV_OBJ_CQ}. */
    public static final int OBJ_CQ = 2;

    private Mlx5dvObjDescriptor() {
    }
}
