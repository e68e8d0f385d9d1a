package io.gda4j.transport;

/**
 * The transports cannot connect a world as configured: no provider connects a pair, a name names no transport, or a
 * process published offers this version cannot read. The message says why and what to do; the world reports it as
 * its own set-up failure.
 */
public class TransportSetupException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public TransportSetupException(String message) {
        super(message);
    }

    public TransportSetupException(String message, Throwable cause) {
        super(message, cause);
    }
}
