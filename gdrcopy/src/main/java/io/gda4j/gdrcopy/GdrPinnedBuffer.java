package io.gda4j.gdrcopy;

import com.sun.jna.Memory;

import java.nio.ByteOrder;

/**
 * Device memory pinned by gdrdrv ({@code gdr_pin_buffer}/{@code gdr_unpin_buffer}), ready to be mapped into this
 * process. At most one {@link GdrMapping} at a time (libgdrapi refuses a second). Closing unmaps first, then
 * unpins; idempotent. Close it before freeing the device memory.
 */
public final class GdrPinnedBuffer implements AutoCloseable {

    private final GdrHandle handle;
    private final long mh;
    private final long deviceAddress;
    private final long sizeBytes;
    private GdrMapping mapping;
    private boolean closed;

    GdrPinnedBuffer(GdrHandle handle, long mh, long deviceAddress, long sizeBytes) {
        this.handle = handle;
        this.mh = mh;
        this.deviceAddress = deviceAddress;
        this.sizeBytes = sizeBytes;
    }

    /** The address that was pinned. */
    public long deviceAddress() {
        return deviceAddress;
    }

    /** The size that was pinned. */
    public long sizeBytes() {
        return sizeBytes;
    }

    /** The whole GPU pages gdrdrv pinned for it. */
    public GpuPageRange pages() {
        return GpuPages.covering(deviceAddress, sizeBytes);
    }

    /** The handle it was pinned through. */
    public GdrHandle handle() {
        return handle;
    }

    /** What gdrdrv reports about the pin ({@code gdr_get_info_v2}, or {@code gdr_get_info} before gdrcopy 2.4). */
    public GdrInfo info() {
        synchronized (handle.lock()) {
            requireOpen();
            try (Memory out = new Memory(GdrInfoDescriptor.SIZE)) {
                out.clear();
                int ret = LibGdrapi.getInfo(handle.nativeHandle(), mh, Memory.nativeValue(out));
                if (ret != 0) {
                    throw GdrcopyException.getInfoFailed(deviceAddress, ret);
                }
                var bytes = out.getByteBuffer(0, GdrInfoDescriptor.SIZE).order(ByteOrder.nativeOrder());
                return LibGdrapi.hasGetInfoV2() ? GdrInfo.decodeV2(bytes) : GdrInfo.decodeV1(bytes);
            }
        }
    }

    /**
     * Whether the device memory was freed while still pinned ({@code gdr_get_callback_flag}); the mapping then no
     * longer reaches it.
     */
    public boolean invalidatedByFree() {
        synchronized (handle.lock()) {
            requireOpen();
            int[] flag = new int[1];
            int ret = LibGdrapi.gdr_get_callback_flag(handle.nativeHandle(), mh, flag);
            if (ret != 0) {
                throw GdrcopyException.callbackFlagFailed(deviceAddress, ret);
            }
            return flag[0] != 0;
        }
    }

    /** Maps the whole pinned range into this process; the mapping's offset 0 is {@link #deviceAddress()}. */
    public GdrMapping map() {
        return map(sizeBytes);
    }

    /** Maps the pinned pages; the mapping views {@code viewSizeBytes} bytes from {@link #deviceAddress()}. */
    GdrMapping map(long viewSizeBytes) {
        if (viewSizeBytes <= 0 || viewSizeBytes > sizeBytes) {
            throw new IllegalArgumentException("a view of " + viewSizeBytes + " bytes does not fit in the "
                    + sizeBytes + " bytes pinned");
        }
        if (viewSizeBytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("a mapping is viewed through one ByteBuffer, at most "
                    + Integer.MAX_VALUE + " bytes; pin and map " + viewSizeBytes + " bytes in smaller pieces");
        }
        synchronized (handle.lock()) {
            requireOpen();
            if (mapping != null) {
                throw new IllegalStateException("this buffer is already mapped (libgdrapi allows one mapping per "
                        + "pin): reuse that GdrMapping or close it first");
            }
            // gdrdrv may pin from below the address (whole pages): map everything it pinned, then offset the view.
            GdrInfo pinInfo = info();
            long offsetBytes = deviceAddress - pinInfo.va();
            long mappedSizeBytes = pinInfo.mappedSize();
            if (offsetBytes < 0 || offsetBytes > mappedSizeBytes - viewSizeBytes) {
                throw new GdrcopyException("gdr_get_info", 0, String.format("gdrdrv pinned [0x%x, 0x%x), which does "
                        + "not hold [0x%x, 0x%x): this binding does not understand this gdrdrv version",
                        pinInfo.va(), pinInfo.va() + mappedSizeBytes, deviceAddress, deviceAddress + viewSizeBytes));
            }
            long[] va = new long[1];
            int ret = LibGdrapi.gdr_map(handle.nativeHandle(), mh, va, mappedSizeBytes);
            if (ret != 0) {
                throw GdrcopyException.mapFailed(deviceAddress, mappedSizeBytes, ret);
            }
            mapping = new GdrMapping(this, va[0], mappedSizeBytes, offsetBytes, viewSizeBytes);
            return mapping;
        }
    }

    /** Unmaps the current mapping if any, then unpins. Idempotent; a failed unpin still counts as closed. */
    @Override
    public void close() {
        synchronized (handle.lock()) {
            if (closed) {
                return;
            }
            closed = true;
            GdrcopyException failure = null;
            if (mapping != null) {
                try {
                    mapping.unmap();
                } catch (GdrcopyException e) {
                    failure = e;
                }
                mapping = null;
            }
            int ret = LibGdrapi.gdr_unpin_buffer(handle.nativeHandle(), mh);
            handle.forget(this);
            if (ret != 0) {
                failure = GdrHandle.chain(failure, GdrcopyException.unpinFailed(deviceAddress, ret));
            }
            if (failure != null) {
                throw failure;
            }
        }
    }

    /** Whether {@link #close()} was called (or the handle was closed). */
    public boolean isClosed() {
        synchronized (handle.lock()) {
            return closed;
        }
    }

    /** The native {@code gdr_mh_t}. */
    long nativeMemoryHandle() {
        return mh;
    }

    void forget(GdrMapping unmapped) {
        if (mapping == unmapped) {
            mapping = null;
        }
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("this GdrPinnedBuffer is closed");
        }
    }

    @Override
    public String toString() {
        return String.format("GdrPinnedBuffer[0x%x, %d bytes%s]", deviceAddress, sizeBytes, closed ? ", closed" : "");
    }
}
