package io.gda4j.verbs;

/**
 * A verbs set-up call failed. The message names the call and its arguments, the errno in words, and what to check;
 * {@link #errno()} keeps the number for code that wants to react (0 where the failure is not an errno).
 */
public class VerbsException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int errno;

    public VerbsException(String message, int errno) {
        super(message);
        this.errno = errno;
    }

    /** The errno value behind the failure, or 0. */
    public int errno() {
        return errno;
    }

    /**
     * {@code "<call> failed: <errno in words>. <hint>"}; the hint may be empty.
     *
     * @param call  the call with its arguments, e.g. {@code "ibv_reg_mr(addr 0x7f.., 4096 bytes, access 0xf)"}
     * @param errno the errno value
     * @param hint  what usually causes it, as a sentence, or ""
     */
    static VerbsException failed(String call, int errno, String hint) {
        String message = call + " failed: " + Errno.describe(errno) + "." + (hint.isEmpty() ? "" : " " + hint);
        return new VerbsException(message, errno);
    }

    /** The errno of a verbs call that returns 0 or an errno value (some providers return -1 and set errno). */
    static int errnoOf(int returned) {
        return returned > 0 ? returned : com.sun.jna.Native.getLastError();
    }
}
