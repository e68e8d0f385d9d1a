package io.gda4j.cuda;

/**
 * A call that can wait for work already running on a GPU (loading a module or a kernel, allocating memory) was
 * refused because a kernel launched on that GPU had not finished after a short grace
 * ({@link CudaDevice#BUSY_GRACE_MILLIS}). Ranks that share a GPU share its context: if the running kernel waits for
 * something this thread was about to launch, the call would wait forever. Thrown instead of hanging; nothing was
 * changed.
 */
public final class ContextBusyException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    private final transient CudaStream runningOn;

    ContextBusyException(String operation, CudaDevice device, CudaStream runningOn) {
        super(operation + " on " + device + " was refused: it can wait for running work, and a kernel on " + runningOn
                + " (same GPU, so the same context) had not finished after " + CudaDevice.BUSY_GRACE_MILLIS
                + " ms; if that kernel waits for this thread's next launch, both would wait forever. Load modules with"
                + " World.loadModules(...) (or resolve kernels) and allocate memory before launching kernels that wait"
                + " for each other, or wait for the running kernels first");
        this.runningOn = runningOn;
    }

    /** The stream whose kernel was still running (may be null after deserialization). */
    public CudaStream runningOn() {
        return runningOn;
    }
}
