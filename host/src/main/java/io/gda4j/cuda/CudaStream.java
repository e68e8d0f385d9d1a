package io.gda4j.cuda;


import jcuda.driver.CUresult;
import jcuda.driver.CUstream;
import jcuda.driver.CUstreamCaptureStatus;
import jcuda.driver.CUstreamWaitValue_flags;
import jcuda.driver.JCudaDriver;
import jcuda.runtime.cudaStream_t;

import java.time.Duration;

/**
 * An owned, non-blocking CUDA stream: work on it runs in order and does not wait for the legacy default stream.
 * Destroyed on {@link #close()} (idempotent; work already queued still completes).
 */
public final class CudaStream extends ContextResource {
    private final CUstream handle;
    /** What the stream is for, e.g. "rank 1 work stream": error messages name it. */
    private final String label;

    CudaStream(CudaContext context, CUstream handle, String label) {
        super(context);
        this.handle = handle;
        this.label = label;
    }

    /** What the stream is for, as given to {@link CudaContext#createStream(String)}; empty when none was given. */
    public String label() {
        return label;
    }

    /** The JCuda handle, for driver calls this class does not wrap. */
    public CUstream handle() {
        return handle;
    }

    /**
     * The native {@code CUstream}, for libraries called without JCuda (NCCL, a driver entry point bound by JNA).
     *
     * @throws IllegalStateException once the stream is closed (a destroyed handle must not reach a library)
     */
    public long nativeHandle() {
        ensureOpen();
        return nativeHandle(handle);
    }

    /** The native pointer of a JCuda stream; see {@link #nativeHandle()}. */
    public static long nativeHandle(CUstream stream) {
        return NativeStream.of(stream);
    }

    /** Waits until all work queued on this stream has finished. */
    public void synchronize() {
        bind();
        int result = JCudaDriver.cuStreamSynchronize(handle);
        if (result != CUresult.CUDA_SUCCESS) {
            Cuda.check(result, "cuStreamSynchronize(" + this + ")");
        }
    }

    /**
     * Waits until all work queued on this stream has finished, for at most {@code limit}. It polls the stream
     * ({@code cuStreamQuery}) instead of blocking in the driver, so it also ends at the limit, or when the thread is
     * interrupted (a test's timeout), where a kernel never returns: {@link #synchronize()} would wait for it forever.
     *
     * @param why what the caller knows of why the work should have ended by then; the message ends with it
     * @throws StreamTimeoutException at the limit, the work still queued
     * @throws IllegalStateException  when the thread is interrupted while it waits (its interrupt status stays set)
     * @throws CudaException          for an error of the work (as {@link #synchronize()})
     */
    public void synchronize(Duration limit, String why) {
        bind();
        String query = "cuStreamQuery(" + this + ")";
        if (!BoundedWait.until(() -> Cuda.isDone(JCudaDriver.cuStreamQuery(handle), query), limit.toNanos(),
                System::nanoTime, "the work on " + this)) {
            throw new StreamTimeoutException(this, limit.toMillis(), why);
        }
    }

    /** Whether all queued work has finished, without waiting ({@code cuStreamQuery}). */
    public boolean isComplete() {
        bind();
        return Cuda.isDone(JCudaDriver.cuStreamQuery(handle), "cuStreamQuery(" + this + ")");
    }

    /**
     * Queues an 8-byte store of {@code value} to {@code address} ({@code cuStreamWriteValue64}): it happens after
     * the work queued before it, with no host round trip. The address may be device memory or mapped host memory.
     */
    public void writeValue64(DevicePointer address, long value) {
        bind();
        int result = JCudaDriver.cuStreamWriteValue64(handle, address, value, 0);
        if (result != CUresult.CUDA_SUCCESS) {
            Cuda.check(result, "cuStreamWriteValue64(" + address + " = " + value + ", " + this + ")");
        }
    }

    /**
     * Makes later work on this stream wait until the 64-bit word at {@code address} satisfies {@code value} under
     * {@code flags} ({@code cuStreamWaitValue64}).
     *
     * @param flags a {@link CUstreamWaitValue_flags} condition, e.g. {@code CU_STREAM_WAIT_VALUE_GEQ}, optionally
     *              or-ed with {@code CU_STREAM_WAIT_VALUE_FLUSH}
     */
    public void waitValue64(DevicePointer address, long value, int flags) {
        bind();
        int result = JCudaDriver.cuStreamWaitValue64(handle, address, value, flags);
        if (result != CUresult.CUDA_SUCCESS) {
            Cuda.check(result, "cuStreamWaitValue64(" + address + ", " + CUstreamWaitValue_flags.stringFor(flags)
                    + " " + value + ", " + this + ")");
        }
    }

    /** Makes later work on this stream wait until the 64-bit word at {@code address} is at least {@code value}. */
    public void waitValue64AtLeast(DevicePointer address, long value) {
        waitValue64(address, value, CUstreamWaitValue_flags.CU_STREAM_WAIT_VALUE_GEQ);
    }

    /**
     * Makes the work queued on this stream after this call wait until the work captured by {@code event}'s latest
     * {@link CudaEvent#record record} has finished ({@code cuStreamWaitEvent}); the host does not wait. The event may
     * have been recorded on any stream, of any context. While the event's stream is being captured into a CUDA graph,
     * this joins this stream into that capture (a fork); the capture can only end once the capturing stream waits on
     * an event recorded here after it (the join).
     */
    public void waitEvent(CudaEvent event) {
        event.ensureOpen();
        bind();
        int result = JCudaDriver.cuStreamWaitEvent(handle, event.handle(), 0);
        if (result != CUresult.CUDA_SUCCESS) {
            Cuda.check(result, "cuStreamWaitEvent(" + this + " waits for " + event + ")");
        }
    }

    /**
     * Queues a copy between two GPUs' memory ({@code cuMemcpyPeerAsync}): over NVLink or PCIe when peer access
     * is possible, staged through the host otherwise.
     */
    public void copyPeerAsync(DevicePointer dst, CudaContext dstContext, DevicePointer src, CudaContext srcContext,
            long sizeBytes) {
        requireNonNegative(sizeBytes);
        bind();
        int result = JCudaDriver.cuMemcpyPeerAsync(dst, dstContext.handle(), src, srcContext.handle(), sizeBytes,
                handle);
        if (result != CUresult.CUDA_SUCCESS) {
            Cuda.check(result, "cuMemcpyPeerAsync(" + sizeBytes + " bytes " + src + " on " + srcContext.device()
                    + " -> " + dst + " on " + dstContext.device() + ", " + this + ")");
        }
    }

    /**
     * Enqueues a copy of {@code sizeBytes} between any two addresses CUDA knows (device memory, a peer's device
     * memory, mapped pinned host memory), with unified addressing ({@code cuMemcpyAsync}). Ordered on this stream
     * only: a copy on a non-blocking stream runs beside kernels on other streams.
     */
    public void copyAsync(DevicePointer dst, DevicePointer src, long sizeBytes) {
        requireNonNegative(sizeBytes);
        bind();
        int result = JCudaDriver.cuMemcpyAsync(dst, src, sizeBytes, handle);
        if (result != CUresult.CUDA_SUCCESS) {
            Cuda.check(result, "cuMemcpyAsync(" + sizeBytes + " bytes " + src + " -> " + dst + ", " + this + ")");
        }
    }

    /**
     * Whether a graph capture is under way on this stream ({@code cuStreamIsCapturing}): work queued now becomes
     * nodes of the graph, replayed later, instead of running once.
     */
    public boolean isCapturing() {
        bind();
        int[] status = new int[1];
        int result = JCudaDriver.cuStreamIsCapturing(handle, status);
        if (result != CUresult.CUDA_SUCCESS) {
            Cuda.check(result, "cuStreamIsCapturing(" + this + ")");
        }
        return status[0] != CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_NONE;
    }

    /** Destroys the stream ({@code cuStreamDestroy}); queued work still completes. */
    @Override
    int free() {
        return JCudaDriver.cuStreamDestroy(handle);
    }

    @Override
    String freeCall() {
        return "cuStreamDestroy(" + this + ")";
    }

    @Override
    String describe() {
        return (label.isEmpty() ? handle.toString() : label) + " on " + context.device();
    }

    private void bind() {
        ensureOpen();
        context.makeCurrent();
    }

    /** Using a destroyed stream's handle is undefined in CUDA, so every user checks first. */
    void ensureOpen() {
        if (isClosed()) {
            throw new IllegalStateException(this + " is closed: create a new one with CudaContext.createStream()");
        }
    }

    private static void requireNonNegative(long sizeBytes) {
        if (sizeBytes < 0) {
            throw new IllegalArgumentException("copy size must not be negative, got " + sizeBytes + " bytes");
        }
    }

    /**
     * JCuda hides a handle's pointer behind a protected getter, which a subclass may call on itself
     * ({@code cudaStream_t(CUstream)} copies the pointer). A driver {@code CUstream} and a runtime
     * {@code cudaStream_t} are the same pointer.
     */
    private static final class NativeStream extends cudaStream_t {
        private NativeStream(CUstream stream) {
            super(stream);
        }

        static long of(CUstream stream) {
            return new NativeStream(stream).getNativePointer();
        }
    }
}
