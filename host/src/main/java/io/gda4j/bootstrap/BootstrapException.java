package io.gda4j.bootstrap;

/** A bootstrap step failed: a refused hello, a timeout naming the ranks that did not arrive, a dead peer. */
public class BootstrapException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public BootstrapException(String message) {
        super(message);
    }

    public BootstrapException(String message, Throwable cause) {
        super(message, cause);
    }
}
