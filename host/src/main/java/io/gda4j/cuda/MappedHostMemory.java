package io.gda4j.cuda;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import jcuda.Pointer;
import jcuda.driver.JCudaDriver;

/**
 * Pinned host memory mapped into the GPU's address space ({@code cuMemHostAlloc} with DEVICEMAP|PORTABLE): the
 * JVM reads and writes it through {@link #hostBuffer()} and the accessors below, kernels through
 * {@link #devicePointer()}. Zeroed at allocation; freed on {@link #close()} (idempotent). PORTABLE: usable from every
 * context, though allocated through one ({@link #context()}).
 *
 * <p>Ordering contract for words shared with the GPU (offsets must be aligned to the word size):
 * <ul>
 *   <li>{@link #getLongAcquire(int)} / {@link #getIntAcquire(int)} pair with a GPU {@code st.release.sys} (or a
 *       {@code fence.acq_rel.sys} then a store): data the GPU wrote before the release is visible after the
 *       acquire load sees the new value.</li>
 *   <li>{@link #putLongRelease(int, long)} / {@link #putIntRelease(int, int)} pair with a GPU
 *       {@code ld.acquire.sys}: data the JVM wrote before the release store is visible to the GPU once it sees the
 *       value.</li>
 *   <li>{@link #getLongVolatile(int)} / {@link #putLongVolatile(int, long)} are sequentially consistent on the
 *       JVM side, for protocols where one thread both stores and then loads another word (Dekker style).</li>
 *   <li>Plain {@code get}/{@code put} carry no ordering: use them for payload written before a release store, or
 *       read after an acquire load.</li>
 * </ul>
 * Accessing the memory after {@code close()} would touch freed pages, so every accessor checks; views obtained
 * from {@link #hostBuffer()} cannot be checked and must not outlive this object.
 */
public final class MappedHostMemory extends ContextResource {
    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
    private static final VarHandle INTS = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());

    private final Pointer hostPointer;
    private final ByteBuffer buffer;
    private final DevicePointer devicePointer;
    private final long hostAddress;
    private final int sizeBytes;
    /** Read on every access; a plain volatile load costs the same as an ordinary one on x86. */
    private volatile boolean freed;

    MappedHostMemory(CudaContext context, Pointer hostPointer, DevicePointer devicePointer, long sizeBytes) {
        super(context);
        this.hostPointer = hostPointer;
        this.devicePointer = devicePointer;
        this.sizeBytes = (int) sizeBytes;
        long host = HostAddress.of(hostPointer);
        // With unified addressing (every 64-bit platform CUDA supports) the mapping has the same address on both sides.
        this.hostAddress = host != 0 ? host : devicePointer.address();
        ByteBuffer view = hostPointer.getByteBuffer(0, sizeBytes);
        if (view == null) {
            throw new IllegalStateException("cuMemHostAlloc returned no ByteBuffer view of " + sizeBytes
                    + " bytes; this JCuda version does not expose host allocations as buffers");
        }
        this.buffer = view.order(ByteOrder.nativeOrder());
        zero();
    }

    /**
     * A new direct view of the whole region in native byte order (capacity {@link #sizeBytes()}); views share
     * the memory but not position or limit. Cache it on hot paths. It must not be used after {@link #close()}.
     */
    public ByteBuffer hostBuffer() {
        ensureOpen();
        return buffer.duplicate().order(ByteOrder.nativeOrder());
    }

    /** The region's address in the GPU's address space, for kernels and stream memory operations. */
    public DevicePointer devicePointer() {
        return devicePointer;
    }

    /** The region's device address as a raw {@code long}. */
    public long deviceAddress() {
        return devicePointer.address();
    }

    /** The region's host virtual address, e.g. for registering it with a NIC. */
    public long hostAddress() {
        return hostAddress;
    }

    /** The region's size in bytes. */
    public long sizeBytes() {
        return sizeBytes;
    }

    /** Acquire load; pairs with the GPU's {@code st.release.sys} of this word. */
    public long getLongAcquire(int offsetBytes) {
        checkWord(offsetBytes, Long.BYTES);
        return (long) LONGS.getAcquire(buffer, offsetBytes);
    }

    /** Release store; pairs with the GPU's {@code ld.acquire.sys} of this word. */
    public void putLongRelease(int offsetBytes, long value) {
        checkWord(offsetBytes, Long.BYTES);
        LONGS.setRelease(buffer, offsetBytes, value);
    }

    /** Sequentially consistent load (JVM side); pairs with the GPU's {@code st.release.sys} like an acquire. */
    public long getLongVolatile(int offsetBytes) {
        checkWord(offsetBytes, Long.BYTES);
        return (long) LONGS.getVolatile(buffer, offsetBytes);
    }

    /** Sequentially consistent store (JVM side); pairs with the GPU's {@code ld.acquire.sys} like a release. */
    public void putLongVolatile(int offsetBytes, long value) {
        checkWord(offsetBytes, Long.BYTES);
        LONGS.setVolatile(buffer, offsetBytes, value);
    }

    /** Acquire load of a 32-bit word; pairs with the GPU's {@code st.release.sys}. */
    public int getIntAcquire(int offsetBytes) {
        checkWord(offsetBytes, Integer.BYTES);
        return (int) INTS.getAcquire(buffer, offsetBytes);
    }

    /** Release store of a 32-bit word; pairs with the GPU's {@code ld.acquire.sys}. */
    public void putIntRelease(int offsetBytes, int value) {
        checkWord(offsetBytes, Integer.BYTES);
        INTS.setRelease(buffer, offsetBytes, value);
    }

    /** Plain load, no ordering: for payload read after an acquire load. */
    public long getLong(int offsetBytes) {
        checkWord(offsetBytes, Long.BYTES);
        return (long) LONGS.get(buffer, offsetBytes);
    }

    /** Plain store, no ordering: for payload that a later release store publishes. */
    public void putLong(int offsetBytes, long value) {
        checkWord(offsetBytes, Long.BYTES);
        LONGS.set(buffer, offsetBytes, value);
    }

    /** Plain 32-bit load, no ordering. */
    public int getInt(int offsetBytes) {
        checkWord(offsetBytes, Integer.BYTES);
        return (int) INTS.get(buffer, offsetBytes);
    }

    /** Plain 32-bit store, no ordering. */
    public void putInt(int offsetBytes, int value) {
        checkWord(offsetBytes, Integer.BYTES);
        INTS.set(buffer, offsetBytes, value);
    }

    /** Sets every byte to zero, then issues a full fence so the zeros are ordered before later stores. */
    public void zero() {
        ensureOpen();
        int offset = 0;
        for (; offset + Long.BYTES <= sizeBytes; offset += Long.BYTES) {
            buffer.putLong(offset, 0L);
        }
        for (; offset < sizeBytes; offset++) {
            buffer.put(offset, (byte) 0);
        }
        VarHandle.fullFence();
    }

    /** Accessors check {@code freed}, so they refuse before the memory goes. */
    @Override
    void closing() {
        freed = true;
    }

    /** Frees the pinned memory ({@code cuMemFreeHost}); kernels and buffer views must be done with it. */
    @Override
    int free() {
        return JCudaDriver.cuMemFreeHost(hostPointer);
    }

    @Override
    String freeCall() {
        return "cuMemFreeHost(" + this + ")";
    }

    @Override
    String describe() {
        return sizeBytes + " bytes, host 0x" + Long.toHexString(hostAddress) + ", device 0x"
                + Long.toHexString(deviceAddress());
    }

    private void checkWord(int offsetBytes, int wordBytes) {
        // One branch for the three failure cases keeps the hot path short; the message sorts them out.
        if (freed || offsetBytes < 0 || offsetBytes > sizeBytes - wordBytes || (offsetBytes & (wordBytes - 1)) != 0) {
            throw badWord(offsetBytes, wordBytes);
        }
    }

    private RuntimeException badWord(int offsetBytes, int wordBytes) {
        if (freed) {
            return new IllegalStateException(this + " is closed; its memory is freed");
        }
        if ((offsetBytes & (wordBytes - 1)) != 0) {
            return new IllegalArgumentException("offset " + offsetBytes + " is not aligned to " + wordBytes
                    + " bytes; atomic accesses need naturally aligned words");
        }
        return new IllegalArgumentException("a " + wordBytes + "-byte word at offset " + offsetBytes
                + " is outside this mapped host buffer of " + sizeBytes + " bytes");
    }

    private void ensureOpen() {
        if (freed) {
            throw new IllegalStateException(this + " is closed; its memory is freed");
        }
    }

    /** JCuda hides a Pointer's address; a subclass may read it, and this is the only place that does. */
    private static final class HostAddress extends Pointer {
        private HostAddress(Pointer pointer) {
            super(pointer);
        }

        static long of(Pointer pointer) {
            HostAddress copy = new HostAddress(pointer);
            return copy.getNativePointer() + copy.getByteOffset();
        }
    }
}
