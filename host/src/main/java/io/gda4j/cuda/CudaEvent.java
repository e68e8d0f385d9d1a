package io.gda4j.cuda;


import jcuda.driver.CUevent;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/**
 * An owned CUDA event with timing enabled: record it on a stream, wait for it, or measure the GPU time between
 * two events. Destroyed on {@link #close()} (idempotent).
 */
public final class CudaEvent extends ContextResource {
    private final CUevent handle;

    CudaEvent(CudaContext context, CUevent handle) {
        super(context);
        this.handle = handle;
    }

    /** The JCuda handle, for driver calls this class does not wrap. */
    public CUevent handle() {
        return handle;
    }

    /** Captures the work queued on {@code stream} so far; the event completes when that work has. */
    public void record(CudaStream stream) {
        stream.ensureOpen();
        bind();
        int result = JCudaDriver.cuEventRecord(handle, stream.handle());
        if (result != CUresult.CUDA_SUCCESS) {
            Cuda.check(result, "cuEventRecord(" + this + " on " + stream + ")");
        }
    }

    /** Waits until the recorded work has finished. */
    public void synchronize() {
        bind();
        int result = JCudaDriver.cuEventSynchronize(handle);
        if (result != CUresult.CUDA_SUCCESS) {
            Cuda.check(result, "cuEventSynchronize(" + this + ")");
        }
    }

    /** Whether the recorded work has finished, without waiting ({@code cuEventQuery}). */
    public boolean isComplete() {
        bind();
        return Cuda.isDone(JCudaDriver.cuEventQuery(handle), "cuEventQuery(" + this + ")");
    }

    /**
     * GPU time in milliseconds from {@code start} to this event (about 0.5 us resolution). Both must have been
     * recorded and completed; call {@link #synchronize()} on this one first.
     */
    public float elapsedMillisSince(CudaEvent start) {
        start.ensureOpen();
        bind();
        float[] millis = {0f};
        Cuda.check(JCudaDriver.cuEventElapsedTime(millis, start.handle, handle),
                "cuEventElapsedTime(" + start + " -> " + this + ")");
        return millis[0];
    }

    /** Destroys the event ({@code cuEventDestroy}). */
    @Override
    int free() {
        return JCudaDriver.cuEventDestroy(handle);
    }

    @Override
    String freeCall() {
        return "cuEventDestroy(" + this + ")";
    }

    @Override
    String describe() {
        return handle + " on " + context.device();
    }

    private void bind() {
        ensureOpen();
        context.makeCurrent();
    }

    /** Using a destroyed event's handle is undefined in CUDA, so every user checks first. */
    void ensureOpen() {
        if (isClosed()) {
            throw new IllegalStateException(this + " is closed: create a new one with CudaContext.createEvent()");
        }
    }
}
