package io.gda4j.world;

/** A device-side {@code wait_until} (or a spin inside a transport) reached the wait timeout. */
public class DeviceWaitTimeoutException extends DeviceErrorException {
    private static final long serialVersionUID = 1L;

    public DeviceWaitTimeoutException(String message, ErrorRecord record) {
        super(message, record);
    }
}
