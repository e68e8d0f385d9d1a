package io.gda4j.cuda;

import java.util.concurrent.atomic.AtomicBoolean;

import jcuda.driver.CUresult;

/**
 * The life cycle of what a {@link CudaContext} owns (streams, events, modules, device and mapped host memory): closed
 * once from any thread, then forgotten by the context (which would otherwise close it again), then freed by one
 * driver call. A failure of that call throws, except {@code CUDA_ERROR_DEINITIALIZED}: the driver has shut down (at
 * JVM exit) and freed everything itself.
 */
abstract class ContextResource implements AutoCloseable {
    /** The context this belongs to; made current for the driver call that frees it. */
    final CudaContext context;
    private final AtomicBoolean closed = new AtomicBoolean();

    ContextResource(CudaContext context) {
        this.context = context;
    }

    /** The context this was created in. */
    public CudaContext context() {
        return context;
    }

    /** Whether {@link #close()} has been called. */
    public final boolean isClosed() {
        return closed.get();
    }

    /**
     * Frees it with the driver call its class names (what must be done with it first is said there). Idempotent.
     */
    @Override
    public final void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        closing();
        context.forget(this);
        context.bind();
        int result = free();
        if (result != CUresult.CUDA_ERROR_DEINITIALIZED) {
            Cuda.check(result, freeCall());
        }
    }

    /** Runs once, first in {@link #close()}, before anything is freed; nothing by default. */
    void closing() {
    }

    /** The driver call that frees the resource ({@code cuStreamDestroy}, {@code cuMemFree}, ...): its CUresult. */
    abstract int free();

    /** That call as an error message names it, e.g. {@code "cuStreamDestroy(CudaStream[...])"}. */
    abstract String freeCall();

    /** What {@link #toString()} says between the brackets, before {@code ", closed"}. */
    abstract String describe();

    @Override
    public final String toString() {
        return getClass().getSimpleName() + "[" + describe() + (isClosed() ? ", closed" : "") + "]";
    }
}
