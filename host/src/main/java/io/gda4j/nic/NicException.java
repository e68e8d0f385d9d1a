package io.gda4j.nic;

/** A NIC could not be opened or could not do a set-up step; the message says what to change. */
public class NicException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public NicException(String message) {
        super(message);
    }

    public NicException(String message, Throwable cause) {
        super(message, cause);
    }
}
