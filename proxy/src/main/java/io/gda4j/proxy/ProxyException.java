package io.gda4j.proxy;

/** The host proxy could not do what it was asked (complete pending work at shutdown, set up a channel). */
public class ProxyException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ProxyException(String message) {
        super(message);
    }

    public ProxyException(String message, Throwable cause) {
        super(message, cause);
    }
}
