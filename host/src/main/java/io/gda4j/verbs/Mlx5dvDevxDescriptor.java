package io.gda4j.verbs;

/**
 * The direct-verbs structs that GPU-resident rings go through (mlx5dv.h), for {@code io.gda4j.mlx5.DevxCommands}'
 * commands: {@code struct mlx5dv_devx_umem_in} registers GPU memory as a umem by its dma-buf fd
 * ({@code mlx5dv_devx_umem_reg_ex}, with {@link #UMEM_MASK_DMABUF}); {@code struct mlx5dv_devx_umem} names it by
 * {@code umem_id}; {@code struct mlx5dv_devx_uar} is a UAR page (its {@code page_id} goes into the CQ and QP
 * contexts, its {@code reg_addr} is the doorbell register); {@code struct mlx5dv_pd} gives the PD number:
 * <pre>
 * mlx5dv_devx_umem_in   0 addr*   8 size   16 access   24 pgsz_bitmap   32 comp_mask   40 dmabuf_fd   48 end
 * mlx5dv_devx_umem      0 umem_id
 * mlx5dv_devx_uar       0 reg_addr*   8 base_addr*   16 page_id   24 mmap_off   32 comp_mask   40 end
 * mlx5dv_pd             0 pdn   8 comp_mask   16 end
 * </pre>
 * Checked against the installed header by {@code VerbsLayoutTest}.
 */
public final class Mlx5dvDevxDescriptor {
    public static final int UMEM_IN_SIZE = 48;
    public static final int UMEM_IN_ADDR_OFFSET = 0;
    public static final int UMEM_IN_SIZE_OFFSET = 8;
    public static final int UMEM_IN_ACCESS_OFFSET = 16;
    public static final int UMEM_IN_PGSZ_BITMAP_OFFSET = 24;
    public static final int UMEM_IN_COMP_MASK_OFFSET = 32;
    public static final int UMEM_IN_DMABUF_FD_OFFSET = 40;
    /** {@code MLX5DV_UMEM_MASK_DMABUF}: {@code dmabuf_fd} is set. */
    public static final int UMEM_MASK_DMABUF = 1;
    public static final int UMEM_UMEM_ID_OFFSET = 0;
    public static final int UAR_REG_ADDR_OFFSET = 0;
    public static final int UAR_BASE_ADDR_OFFSET = 8;
    public static final int UAR_PAGE_ID_OFFSET = 16;
    public static final int PD_SIZE = 16;
    public static final int PD_PDN_OFFSET = 0;
    /** {@code MLX5DV_OBJ_PD}: ask {@code mlx5dv_init_obj} for a PD's number. */
    public static final int OBJ_PD = 1 << 6;

    private Mlx5dvDevxDescriptor() {
    }
}
