package io.gda4j.hostflag;

/**
 * A host-flag backend was asked for by name but cannot be used on this machine. The message says why and which
 * backend to ask for instead.
 */
public final class HostFlagUnavailableException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final HostFlags.Backend backend;

    HostFlagUnavailableException(HostFlags.Backend backend, String message) {
        super(message);
        this.backend = backend;
    }

    /** The backend that was asked for. */
    public HostFlags.Backend backend() {
        return backend;
    }
}
