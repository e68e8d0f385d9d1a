package io.gda4j.world;

/**
 * A device API call failed inside a kernel; {@link #record()} holds what the device wrote. Thrown by the host
 * after the kernel returned (kernels never hang: every spin times out or sees the abort flag).
 */
public class DeviceErrorException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final transient ErrorRecord record;

    public DeviceErrorException(String message, ErrorRecord record) {
        super(message);
        this.record = record;
    }

    /** The device's record, or null when the failure was seen without one (the abort flag alone). */
    public ErrorRecord record() {
        return record;
    }
}
