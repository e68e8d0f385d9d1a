package io.gda4j.nic.mlx5;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;

/**
 * JNA direct mapping of the one CUDA driver entry point JCuda 12.6 lacks: {@code cuMemGetHandleForAddressRange}
 * (CUDA 11.7+), which exports GPU memory as a dma-buf file descriptor for {@code ibv_reg_dmabuf_mr}. Checked with
 * {@code javap} on jcuda-12.6.0.jar: {@code JCudaDriver} has no such method, only the
 * {@code CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED} attribute. The symbol is exported unversioned (cuda.h has no
 * {@code #define cuMemGetHandleForAddressRange ..._v2}). libcuda.so.1 is the library JCuda's native part loaded,
 * so the same driver instance, and the context JCuda made current, answer.
 *
 * <p>Loading never throws: where libcuda is absent (every machine without a GPU) {@link #isAvailable()} is false
 * and GPU memory is registered through nvidia-peermem, or not at all.
 */
final class LibCuda {
    static final String LIBRARY_NAME = "libcuda.so.1";
    /** {@code CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD} (cuda.h, enum CUmemRangeHandleType). */
    static final int CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD = 0x1;

    private static final String UNAVAILABLE_REASON;

    static {
        String reason = null;
        try {
            Native.register(LibCuda.class, NativeLibrary.getInstance(LIBRARY_NAME));
        } catch (LinkageError | RuntimeException e) {
            String message = String.valueOf(e.getMessage()).strip();
            int newline = message.indexOf('\n');
            reason = newline < 0 ? message : message.substring(0, newline);
        }
        UNAVAILABLE_REASON = reason;
    }

    private LibCuda() {
    }

    static boolean isAvailable() {
        return UNAVAILABLE_REASON == null;
    }

    /** Why the binding cannot be used, or null. */
    static String unavailableReason() {
        return UNAVAILABLE_REASON;
    }

    /**
     * {@code CUresult cuMemGetHandleForAddressRange(void *handle, CUdeviceptr dptr, size_t size,
     * CUmemRangeHandleType handleType, unsigned long long flags)}: for a dma-buf, {@code handle} points to an int
     * that receives the fd; {@code dptr} and {@code size} must be aligned to the host page size.
     */
    static native int cuMemGetHandleForAddressRange(int[] handle, long dptr, long size, int handleType, long flags);
}
