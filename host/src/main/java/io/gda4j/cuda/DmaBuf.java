package io.gda4j.cuda;

/**
 * GPU memory exported as a dma-buf file descriptor ({@code cuMemGetHandleForAddressRange}), which a NIC registers
 * with {@code ibv_reg_dmabuf_mr}: the GPUDirect RDMA path that needs no nvidia-peermem.
 */
public final class DmaBuf {
    /** {@code CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD} (cuda.h, enum CUmemRangeHandleType). */
    public static final int CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD = 0x1;

    private DmaBuf() {
    }

    /** Why no dma-buf can be exported in this process (libcuda cannot be bound), or null where it can. */
    public static String unavailableReason() {
        return LibCuda.unavailableReason();
    }

    /**
     * Exports {@code [start, start + lengthBytes)} of {@code owner}'s memory (page-aligned) as a dma-buf; the caller
     * closes the descriptor once it is registered.
     *
     * @throws CudaException naming the range and the GPU when the driver refuses
     */
    public static int export(CudaContext owner, long start, long lengthBytes) {
        owner.makeCurrent();
        int[] fd = {-1};
        int result = LibCuda.cuMemGetHandleForAddressRange(fd, start, lengthBytes,
                CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0L);
        if (result != Driver.SUCCESS) {
            throw new CudaException(result, String.format("cuMemGetHandleForAddressRange(0x%x, %d bytes,"
                    + " DMA_BUF_FD) on %s", start, lengthBytes, owner.device()));
        }
        return fd[0];
    }
}
