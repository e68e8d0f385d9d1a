package io.gda4j.gdrcopy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * An open libgdrapi handle ({@code gdr_open}/{@code gdr_close}): the root of pinned buffers and their mappings.
 *
 * <p>Closing it closes what is still open beneath it, newest first (each mapping unmapped before its buffer is
 * unpinned), then calls {@code gdr_close}; closing twice does nothing. Set-up calls throw {@link GdrcopyException}
 * with advice. Handle, buffers and mappings share one lock, so closing from another thread is safe (using a
 * mapping's memory while another thread closes it is not).
 */
public final class GdrHandle implements AutoCloseable {

    private final long g;
    private final Object lock = new Object();
    /** Open pinned buffers, oldest first. */
    private final Deque<GdrPinnedBuffer> pins = new ArrayDeque<>();
    private boolean closed;

    private GdrHandle(long g) {
        this.g = g;
    }

    /**
     * Opens a handle.
     *
     * @throws GdrcopyException when libgdrapi is not loaded or gdr_open fails (the message says why and what to do)
     */
    public static GdrHandle open() {
        requireLibrary();
        long g = LibGdrapi.gdr_open();
        if (g == 0) {
            Path node = Path.of(GdrcopyConfig.DEVICE_DEFAULT);
            throw GdrcopyException.openFailed(node, Files.exists(node));
        }
        return new GdrHandle(g);
    }

    /** Throws the LIBRARY_ABSENT sentence as a {@link GdrcopyException} when libgdrapi is not loaded. */
    static void requireLibrary() {
        if (!LibGdrapi.isLoaded()) {
            throw GdrcopyException.libraryUnavailable(
                    GdrcopyStatus.libraryAbsent(LibGdrapi.libraryName(), LibGdrapi.loadFailure()).sentence());
        }
    }

    /** gdrdrv's version ({@code gdr_driver_get_version}). */
    public GdrcopyStatus.Version driverVersion() {
        synchronized (lock) {
            requireOpen();
            int[] major = new int[1];
            int[] minor = new int[1];
            int ret = LibGdrapi.gdr_driver_get_version(g, major, minor);
            if (ret != 0) {
                throw GdrcopyException.driverVersionFailed(ret);
            }
            return new GdrcopyStatus.Version(major[0], minor[0]);
        }
    }

    /**
     * Pins {@code [deviceAddress, deviceAddress + sizeBytes)} of a {@code cuMemAlloc}'d buffer for CPU mapping.
     * gdrdrv pins the whole 64 KiB pages holding the range ({@link GpuPages#covering}); they must all lie inside
     * one allocation, so either pass a 64 KiB-aligned address with an over-allocated buffer (see {@link GpuPages})
     * or know that the surrounding pages are yours.
     *
     * @throws GdrcopyException when gdr_pin_buffer fails
     */
    public GdrPinnedBuffer pin(long deviceAddress, long sizeBytes) {
        if (deviceAddress <= 0) {
            throw new IllegalArgumentException(String.format("device address 0x%x is not a device pointer",
                    deviceAddress));
        }
        GpuPages.covering(deviceAddress, sizeBytes); // validates size and overflow
        synchronized (lock) {
            requireOpen();
            long[] handle = new long[1];
            int ret = LibGdrapi.gdr_pin_buffer(g, deviceAddress, sizeBytes, 0L, 0, handle);
            if (ret != 0) {
                throw GdrcopyException.pinFailed(deviceAddress, sizeBytes, ret);
            }
            GdrPinnedBuffer pinned = new GdrPinnedBuffer(this, handle[0], deviceAddress, sizeBytes);
            pins.addLast(pinned);
            return pinned;
        }
    }

    /** Whether {@link #close()} was called. */
    public boolean isClosed() {
        synchronized (lock) {
            return closed;
        }
    }

    /**
     * Closes open buffers (and their mappings), newest first, then the handle. Idempotent; when a step fails the
     * rest still run and the first failure is thrown with the others suppressed.
     */
    @Override
    public void close() {
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            GdrcopyException failure = null;
            while (!pins.isEmpty()) {
                GdrPinnedBuffer newest = pins.peekLast();
                try {
                    newest.close();
                } catch (GdrcopyException e) {
                    failure = chain(failure, e);
                } finally {
                    pins.remove(newest);
                }
            }
            int ret = LibGdrapi.gdr_close(g);
            if (ret != 0) {
                failure = chain(failure, GdrcopyException.closeFailed(ret));
            }
            if (failure != null) {
                throw failure;
            }
        }
    }

    static GdrcopyException chain(GdrcopyException first, GdrcopyException next) {
        if (first == null) {
            return next;
        }
        first.addSuppressed(next);
        return first;
    }

    /** The lock every object under this handle changes its state under. */
    Object lock() {
        return lock;
    }

    /** The native {@code gdr_t}; valid until {@code gdr_close}, which runs last in {@link #close()}. */
    long nativeHandle() {
        return g;
    }

    void forget(GdrPinnedBuffer pinned) {
        pins.remove(pinned);
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("this GdrHandle is closed");
        }
    }

    @Override
    public String toString() {
        return String.format("GdrHandle[0x%x%s]", g, closed ? ", closed" : "");
    }
}
