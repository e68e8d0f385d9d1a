package io.gda4j.samples;

/** Bad input from the command line: printed as one line, exit code 2, never a stack trace. */
public class UsageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public UsageException(String message) {
        super(message);
    }

    public UsageException(String message, Throwable cause) {
        super(message, cause);
    }
}
