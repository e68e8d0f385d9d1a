package io.gda4j.cuda;

/**
 * CUDA cannot be used on this machine at all: no NVIDIA driver, no GPU, or the JCuda binding failed to load.
 * The {@linkplain #reason() reason} is the same text {@link Cuda#status()} reports.
 */
public class CudaUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String reason;

    /** @param reason why CUDA is unavailable, as {@link CudaStatus#reason()} says it */
    public CudaUnavailableException(String reason) {
        super("CUDA is not available: " + reason
                + " (this operation needs an NVIDIA GPU and driver; run it on a GPU machine)");
        this.reason = reason;
    }

    /** Why CUDA is unavailable, e.g. "libcuda.so.1 (the NVIDIA driver) was not found: ...". */
    public String reason() {
        return reason;
    }
}
