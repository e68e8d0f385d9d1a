package io.gda4j.gdrcopy;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.ReadOnlyBufferException;

/**
 * Pinned GPU memory mapped into this process ({@code gdr_map}/{@code gdr_unmap}). Offset 0 of every method is the
 * device address that was pinned, whatever page gdrdrv's mapping starts at.
 *
 * <p>Hot path: {@link #putLongRelease}, {@link #getLongAcquire} and friends are VarHandle accesses on a direct
 * ByteBuffer (a few nanoseconds plus the PCIe trip), never a JNA call. Bulk copies go through
 * {@code gdr_copy_to_mapping}/{@code gdr_copy_from_mapping}, which pick SIMD copies suited to the mapping type.
 *
 * <p>Closing unmaps; a mapping returned by {@link Gdrcopy#map(long, long)} also unpins and closes its handle.
 * Idempotent. Every ByteBuffer from {@link #buffer()} is dangling after close: touching one crashes the JVM.
 */
public final class GdrMapping implements AutoCloseable {

    private final GdrPinnedBuffer pinned;
    private final long mappedVa;
    private final long mappedSizeBytes;
    private final long offsetBytes;
    private final long sizeBytes;
    private final ByteBuffer buffer;
    private final MappedWords words;
    private boolean ownsPinAndHandle;
    /** Plain on purpose: read on every hot-path access; written under the handle's lock. */
    private boolean closed;

    GdrMapping(GdrPinnedBuffer pinned, long mappedVa, long mappedSizeBytes, long offsetBytes, long sizeBytes) {
        this.pinned = pinned;
        this.mappedVa = mappedVa;
        this.mappedSizeBytes = mappedSizeBytes;
        this.offsetBytes = offsetBytes;
        this.sizeBytes = sizeBytes;
        this.buffer = new Pointer(mappedVa + offsetBytes).getByteBuffer(0, sizeBytes).order(ByteOrder.nativeOrder());
        this.words = new MappedWords(buffer);
    }

    /** Makes closing this mapping also unpin the buffer and close the handle (for {@link Gdrcopy#map}). */
    GdrMapping ownPinAndHandle() {
        synchronized (pinned.handle().lock()) {
            ownsPinAndHandle = true;
            return this;
        }
    }

    /** The GPU address of offset 0: what a kernel uses for the same bytes. */
    public long deviceAddress() {
        return pinned.deviceAddress();
    }

    /** The CPU address of offset 0 in this process. */
    public long hostAddress() {
        return mappedVa + offsetBytes;
    }

    /** Bytes viewed from offset 0. */
    public long sizeBytes() {
        return sizeBytes;
    }

    /** The pinned buffer underneath. */
    public GdrPinnedBuffer pinnedBuffer() {
        return pinned;
    }

    /** {@code gdr_get_info} of the pinned buffer, now that it is mapped (mapping type, write-combining or not). */
    public GdrInfo info() {
        return pinned.info();
    }

    /**
     * A fresh native-order view of the mapped bytes (position 0, capacity {@link #sizeBytes()}), for plain
     * payload stores before a {@link #putLongRelease}; valid until {@link #close()}.
     */
    public ByteBuffer buffer() {
        requireOpen();
        return buffer.duplicate().order(ByteOrder.nativeOrder());
    }

    /**
     * Stores the 8-byte word at {@code offsetBytes}, ordered after every earlier store of this thread (including
     * plain and write-combined stores to this mapping), and drains it out of the CPU at once. Pairs with a GPU
     * {@code ld.acquire.sys} of {@code deviceAddress() + offsetBytes}.
     */
    public void putLongRelease(long offsetBytes, long value) {
        requireOpen();
        words.putLongRelease(offsetBytes, value);
    }

    /** As {@link #putLongRelease}, and also a Java volatile write. Pairs with a GPU {@code ld.acquire.sys}. */
    public void putLongVolatile(long offsetBytes, long value) {
        requireOpen();
        words.putLongVolatile(offsetBytes, value);
    }

    /**
     * Loads the 8-byte word at {@code offsetBytes}; this thread's later accesses are not performed before it. Pairs
     * with a GPU {@code st.release.sys} to the same word. A PCIe read: about a microsecond.
     */
    public long getLongAcquire(long offsetBytes) {
        requireOpen();
        return words.getLongAcquire(offsetBytes);
    }

    /** A Java volatile load of the word at {@code offsetBytes}; pairs with a GPU {@code st.release.sys}. */
    public long getLongVolatile(long offsetBytes) {
        requireOpen();
        return words.getLongVolatile(offsetBytes);
    }

    /**
     * Orders every earlier store of this thread (to this mapping or elsewhere) before every later one and drains
     * write-combining buffers: use after plain stores through {@link #buffer()} that the GPU should see now.
     */
    public void storeFence() {
        MappedWords.storeFence();
    }

    /**
     * Copies {@code src}'s remaining bytes to offset {@code offsetBytes} with {@code gdr_copy_to_mapping} (which
     * fences write-combined stores itself) and advances {@code src}'s position.
     */
    public void copyToMapping(long offsetBytes, ByteBuffer src) {
        int length = src.remaining();
        checkRange(offsetBytes, length);
        if (length == 0) {
            return;
        }
        synchronized (pinned.handle().lock()) {
            requireOpen();
            int ret;
            if (src.isDirect()) {
                ret = LibGdrapi.gdr_copy_to_mapping(pinned.nativeMemoryHandle(), hostAddress() + offsetBytes,
                        addressOf(src) + src.position(), length);
            } else {
                byte[] bytes = new byte[length];
                src.duplicate().get(bytes);
                try (Memory staging = new Memory(length)) {
                    staging.write(0, bytes, 0, length);
                    ret = LibGdrapi.gdr_copy_to_mapping(pinned.nativeMemoryHandle(), hostAddress() + offsetBytes,
                            Pointer.nativeValue(staging), length);
                }
            }
            if (ret != 0) {
                throw GdrcopyException.copyFailed("gdr_copy_to_mapping", offsetBytes, length, ret);
            }
            src.position(src.position() + length);
        }
    }

    /**
     * Fills {@code dst}'s remaining bytes from offset {@code offsetBytes} with {@code gdr_copy_from_mapping} and
     * advances {@code dst}'s position.
     */
    public void copyFromMapping(long offsetBytes, ByteBuffer dst) {
        if (dst.isReadOnly()) {
            throw new ReadOnlyBufferException();
        }
        int length = dst.remaining();
        checkRange(offsetBytes, length);
        if (length == 0) {
            return;
        }
        synchronized (pinned.handle().lock()) {
            requireOpen();
            int ret;
            if (dst.isDirect()) {
                ret = LibGdrapi.gdr_copy_from_mapping(pinned.nativeMemoryHandle(), addressOf(dst) + dst.position(),
                        hostAddress() + offsetBytes, length);
            } else {
                try (Memory staging = new Memory(length)) {
                    ret = LibGdrapi.gdr_copy_from_mapping(pinned.nativeMemoryHandle(), Pointer.nativeValue(staging),
                            hostAddress() + offsetBytes, length);
                    if (ret == 0) {
                        byte[] bytes = new byte[length];
                        staging.read(0, bytes, 0, length);
                        dst.duplicate().put(bytes);
                    }
                }
            }
            if (ret != 0) {
                throw GdrcopyException.copyFailed("gdr_copy_from_mapping", offsetBytes, length, ret);
            }
            dst.position(dst.position() + length);
        }
    }

    /**
     * Unmaps; when this mapping came from {@link Gdrcopy#map}, closes its handle instead, which unmaps, unpins and
     * then calls gdr_close, in that order. Idempotent.
     */
    @Override
    public void close() {
        synchronized (pinned.handle().lock()) {
            if (ownsPinAndHandle) {
                pinned.handle().close();
            }
            unmap();
        }
    }

    /** gdr_unmap only, once; called by {@link #close()} and by the pinned buffer before it unpins. */
    void unmap() {
        GdrHandle handle = pinned.handle();
        synchronized (handle.lock()) {
            if (closed) {
                return;
            }
            closed = true;
            pinned.forget(this);
            int ret = LibGdrapi.gdr_unmap(handle.nativeHandle(), pinned.nativeMemoryHandle(), mappedVa,
                    mappedSizeBytes);
            if (ret != 0) {
                throw GdrcopyException.unmapFailed(pinned.deviceAddress(), mappedSizeBytes, ret);
            }
        }
    }

    /** Whether {@link #close()} was called (directly or through its buffer or handle). */
    public boolean isClosed() {
        synchronized (pinned.handle().lock()) {
            return closed;
        }
    }

    /** Validates an 8-byte word offset the way the hot path will. */
    void checkLongOffset(long offsetBytes) {
        words.index(offsetBytes);
    }

    private void checkRange(long offsetBytes, long length) {
        if (offsetBytes < 0 || offsetBytes > sizeBytes - length) {
            throw new IndexOutOfBoundsException(length + " bytes at offset " + offsetBytes
                    + " do not fit in a mapping of " + sizeBytes + " bytes");
        }
    }

    private static long addressOf(ByteBuffer direct) {
        return Pointer.nativeValue(Native.getDirectBufferPointer(direct));
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("this GdrMapping is closed");
        }
    }

    @Override
    public String toString() {
        return String.format("GdrMapping[device 0x%x -> host 0x%x, %d bytes%s]", deviceAddress(), hostAddress(),
                sizeBytes, closed ? ", closed" : "");
    }
}
