package io.gda4j.cuda;

import com.sun.jna.Callback;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;

/**
 * The one JNA binding of libcuda: direct mappings of the driver entry points JCuda 12.6 lacks or cannot call.
 * <ul>
 *   <li>{@code cuMemGetHandleForAddressRange} (CUDA 11.7+), which exports GPU memory as a dma-buf file descriptor
 *       for {@code ibv_reg_dmabuf_mr} ({@link DmaBuf}): {@code JCudaDriver} has no such method (checked with
 *       {@code javap} on jcuda-12.6.0.jar), only the {@code CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED} attribute. The
 *       symbol is exported unversioned.</li>
 *   <li>{@code cuStreamBatchMemOp}, which JCuda declares but cannot call: its {@code CUstreamBatchMemOpParams} has no
 *       fields. cuda.h maps the name to {@code cuStreamBatchMemOp_v2}, the symbol bound here
 *       ({@link StreamWriteBatch}).</li>
 *   <li>{@code cuLaunchHostFunc}, which JCuda binds with a callback record it frees after the first call, so a
 *       graph that captured it would call freed memory on its second replay, and which attaches and detaches the
 *       driver's thread on every call ({@link HostFunctions}).</li>
 * </ul>
 * libcuda.so.1 is the library JCuda's native part loaded, so the same driver instance, and the context JCuda made
 * current, answer. Loading never throws: where libcuda is absent (every machine without a GPU)
 * {@link #unavailableReason()} says why, and the callers fall back or refuse with it.
 */
final class LibCuda {
    static final String LIBRARY_NAME = "libcuda.so.1";
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

    /** Why the binding cannot be used, or null where it can. */
    static String unavailableReason() {
        return UNAVAILABLE_REASON;
    }

    /**
     * {@code CUresult cuMemGetHandleForAddressRange(void *handle, CUdeviceptr dptr, size_t size,
     * CUmemRangeHandleType handleType, unsigned long long flags)}: for a dma-buf, {@code handle} points to an int
     * that receives the fd; {@code dptr} and {@code size} must be aligned to the host page size.
     */
    static native int cuMemGetHandleForAddressRange(int[] handle, long dptr, long size, int handleType, long flags);

    /**
     * {@code CUresult cuStreamBatchMemOp_v2(CUstream stream, unsigned int count, CUstreamBatchMemOpParams *paramArray,
     * unsigned int flags)}: {@code count} operations of {@link StreamWriteBatch#OP_BYTES} bytes each, queued on the
     * stream in array order; {@code flags} must be 0.
     */
    static native int cuStreamBatchMemOp_v2(long stream, int count, Pointer paramArray, int flags);

    /** {@code CUhostFn}: {@code void CUDA_CB fn(void *userData)}, run on a driver thread. */
    public interface HostFn extends Callback {
        void invoke(long userData);
    }

    /**
     * {@code CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)}: {@code fn(userData)} runs on
     * a driver thread once the work queued on the stream before it is done; the stream's later work waits for it.
     */
    static native int cuLaunchHostFunc(long stream, HostFn fn, long userData);
}
