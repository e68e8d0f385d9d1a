package io.gda4j.proxy;

import com.sun.jna.LastErrorException;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;

/**
 * JNA direct mapping of the C library calls that {@link MemfdMemory} needs and Java has no API for: creating an
 * anonymous memory file ({@code memfd_create}, Linux) and closing its descriptor.
 */
final class LibC {
    /** {@code MFD_CLOEXEC}: a child process started later does not inherit the descriptor. */
    static final int MFD_CLOEXEC = 1;

    private static final Throwable UNAVAILABLE;

    static {
        Throwable why = null;
        try {
            Native.register(LibC.class, NativeLibrary.getInstance(Platform.C_LIBRARY_NAME));
        } catch (LinkageError | RuntimeException e) {
            why = e;
        }
        UNAVAILABLE = why;
    }

    private LibC() {
    }

    /** Why the C library could not be bound, or null. */
    static Throwable unavailable() {
        return UNAVAILABLE;
    }

    /** Returns a descriptor of a new, empty anonymous file named {@code name} (for /proc listings only). */
    static native int memfd_create(String name, int flags) throws LastErrorException;

    static native int close(int fd) throws LastErrorException;
}
