package io.gda4j.proxy;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;

/**
 * JNA direct mapping of {@code cuStreamBatchMemOp}, which JCuda 12.6 declares but cannot call: its
 * {@code CUstreamBatchMemOpParams} has no fields (checked with {@code javap} on jcuda-12.6.0.jar). cuda.h maps the name
 * to {@code cuStreamBatchMemOp_v2}, the symbol bound here. libcuda.so.1 is the library JCuda's native part loaded, so
 * the same driver instance, and the context JCuda made current, answer.
 *
 * <p>Loading never throws: where libcuda is absent (every machine without a GPU) {@link #unavailableReason()} says
 * why, and the copy-engine handler writes its words one {@code cuStreamWriteValue64} each.
 */
final class LibCudaMemOps {
    static final String LIBRARY_NAME = "libcuda.so.1";

    private static final String UNAVAILABLE_REASON;

    static {
        String reason = null;
        try {
            Native.register(LibCudaMemOps.class, NativeLibrary.getInstance(LIBRARY_NAME));
        } catch (LinkageError | RuntimeException e) {
            String message = String.valueOf(e.getMessage()).strip();
            int newline = message.indexOf('\n');
            reason = newline < 0 ? message : message.substring(0, newline);
        }
        UNAVAILABLE_REASON = reason;
    }

    private LibCudaMemOps() {
    }

    /** Why the binding cannot be used, or null where it can. */
    static String unavailableReason() {
        return UNAVAILABLE_REASON;
    }

    /**
     * {@code CUresult cuStreamBatchMemOp_v2(CUstream stream, unsigned int count, CUstreamBatchMemOpParams *paramArray,
     * unsigned int flags)}: {@code count} operations of {@link StreamWriteBatch#OP_BYTES} bytes each, queued on the
     * stream in array order; {@code flags} must be 0.
     */
    static native int cuStreamBatchMemOp_v2(long stream, int count, Pointer paramArray, int flags);
}
