package io.gda4j.world;

/**
 * A world cannot be built as asked: too few GPUs, an unknown or impossible transport, no CUDA. The message says
 * what is missing and what to change.
 */
public class WorldSetupException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public WorldSetupException(String message) {
        super(message);
    }

    public WorldSetupException(String message, Throwable cause) {
        super(message, cause);
    }
}
