package io.gda4j.nic.mlx5;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;

/**
 * JNA direct mapping of the two C library calls the mlx5 NIC needs: the host page size (every CUDA registration
 * and dma-buf export is rounded to it; 4 KiB on x86-64, 4 or 64 KiB on aarch64) and {@code close} for the
 * dma-buf fd, which the MR keeps a reference of its own to once {@code ibv_reg_dmabuf_mr} returns.
 */
final class LibC {
    /** Used when the C library cannot be bound (never on Linux); registrations then assume 4 KiB pages. */
    static final int FALLBACK_PAGE_SIZE = 4096;

    private static final boolean AVAILABLE;

    static {
        boolean available;
        try {
            Native.register(LibC.class, NativeLibrary.getInstance(Platform.C_LIBRARY_NAME));
            available = true;
        } catch (LinkageError | RuntimeException e) {
            available = false;
        }
        AVAILABLE = available;
    }

    private LibC() {
    }

    /** The host page size in bytes ({@code getpagesize()}). */
    static int pageSize() {
        return AVAILABLE ? getpagesize() : FALLBACK_PAGE_SIZE;
    }

    /** Closes a file descriptor; returns 0 or -1 (errno in {@code Native.getLastError()}). */
    static int closeFd(int fd) {
        return AVAILABLE ? close(fd) : -1;
    }

    private static native int getpagesize();

    private static native int close(int fd);
}
