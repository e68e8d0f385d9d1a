package io.gda4j.cuda;

/**
 * A bounded wait for a stream ({@link CudaStream#synchronize(java.time.Duration, String)}) reached its limit with
 * work still queued. Nothing was freed or changed: the work stays queued and may still end. Thrown instead of
 * waiting forever behind a kernel that never returns.
 */
public final class StreamTimeoutException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    private final transient CudaStream stream;
    private final long limitMillis;

    StreamTimeoutException(CudaStream stream, long limitMillis, String why) {
        super(stream + " still had work running after " + limitMillis + " ms" + (why.isEmpty() ? "" : ": " + why));
        this.stream = stream;
        this.limitMillis = limitMillis;
    }

    /** The stream that had not finished (null after deserialization). */
    public CudaStream stream() {
        return stream;
    }

    /** How long the wait lasted. */
    public long limitMillis() {
        return limitMillis;
    }
}
