package io.gda4j.cuda;

import java.nio.ByteBuffer;

import jcuda.Pointer;
import jcuda.driver.CUpointer_attribute;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;

/**
 * An owned allocation of GPU memory ({@code cuMemAlloc}), freed on {@link #close()} (idempotent).
 *
 * <p>The host-side copies and fills here are synchronous: when they return, the bytes are in device memory and
 * visible to work submitted afterwards on any stream. They are for set-up and checks; hot paths use streams.
 * Every offset and length is checked against {@link #sizeBytes()}.
 */
public final class DeviceMemory extends ContextResource {
    /** The legacy default stream: host copies run on it, and syncing it makes them complete. */
    private static final CUstream LEGACY_STREAM = new CUstream();

    private final DevicePointer pointer;
    private final long address;
    private final long sizeBytes;

    DeviceMemory(CudaContext context, DevicePointer pointer, long sizeBytes) {
        super(context);
        this.pointer = pointer;
        this.address = pointer.address();
        this.sizeBytes = sizeBytes;
    }

    /** The start of the allocation, usable in JCuda calls and as a kernel argument. */
    public DevicePointer pointer() {
        return pointer;
    }

    /** The start of the allocation as a raw device address. */
    public long address() {
        return address;
    }

    /** The allocation's size in bytes. */
    public long sizeBytes() {
        return sizeBytes;
    }

    /** Copies {@code length} bytes from {@code src[srcOffset..]} to this memory at {@code dstOffsetBytes}. */
    public void copyFromHost(long dstOffsetBytes, byte[] src, int srcOffset, int length) {
        checkArrayRange(src.length, srcOffset, length, "source array");
        checkRange(dstOffsetBytes, length);
        if (length == 0) {
            return;
        }
        bind();
        check(JCudaDriver.cuMemcpyHtoD(pointer.plusBytes(dstOffsetBytes), Pointer.to(src).withByteOffset(srcOffset),
                length), "cuMemcpyHtoD", dstOffsetBytes, length);
        completeLegacyStream("cuMemcpyHtoD");
    }

    /** Copies {@code length} bytes of this memory at {@code srcOffsetBytes} into {@code dst[dstOffset..]}. */
    public void copyToHost(long srcOffsetBytes, byte[] dst, int dstOffset, int length) {
        checkArrayRange(dst.length, dstOffset, length, "destination array");
        checkRange(srcOffsetBytes, length);
        if (length == 0) {
            return;
        }
        bind();
        check(JCudaDriver.cuMemcpyDtoH(Pointer.to(dst).withByteOffset(dstOffset), pointer.plusBytes(srcOffsetBytes),
                length), "cuMemcpyDtoH", srcOffsetBytes, length);
    }

    /**
     * Copies {@code src}'s remaining bytes (position to limit) to this memory at {@code dstOffsetBytes}, and
     * advances {@code src}'s position to its limit, as a channel write would. Direct buffers avoid a JNI copy.
     */
    public void copyFromHost(long dstOffsetBytes, ByteBuffer src) {
        int length = src.remaining();
        checkRange(dstOffsetBytes, length);
        requireAddressable(src);
        if (length == 0) {
            return;
        }
        bind();
        // Pointer.toBuffer starts at the buffer's position; Pointer.to(Buffer) would start at its base.
        check(JCudaDriver.cuMemcpyHtoD(pointer.plusBytes(dstOffsetBytes), Pointer.toBuffer(src), length),
                "cuMemcpyHtoD", dstOffsetBytes, length);
        completeLegacyStream("cuMemcpyHtoD");
        src.position(src.limit());
    }

    /**
     * Copies this memory at {@code srcOffsetBytes} into {@code dst}'s remaining bytes (position to limit), and
     * advances {@code dst}'s position to its limit, as a channel read would.
     */
    public void copyToHost(long srcOffsetBytes, ByteBuffer dst) {
        int length = dst.remaining();
        checkRange(srcOffsetBytes, length);
        requireAddressable(dst);
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("cannot copy device memory into a read-only ByteBuffer");
        }
        if (length == 0) {
            return;
        }
        bind();
        check(JCudaDriver.cuMemcpyDtoH(Pointer.toBuffer(dst), pointer.plusBytes(srcOffsetBytes), length),
                "cuMemcpyDtoH", srcOffsetBytes, length);
        dst.position(dst.limit());
    }

    /** Sets every byte to {@code value}. */
    public void fill(byte value) {
        fill(0, sizeBytes, value);
    }

    /** Sets {@code lengthBytes} bytes from {@code offsetBytes} to {@code value} ({@code cuMemsetD8}). */
    public void fill(long offsetBytes, long lengthBytes, byte value) {
        checkRange(offsetBytes, lengthBytes);
        if (lengthBytes == 0) {
            return;
        }
        bind();
        check(JCudaDriver.cuMemsetD8(pointer.plusBytes(offsetBytes), value, lengthBytes), "cuMemsetD8", offsetBytes,
                lengthBytes);
        // cuMemsetD8 is asynchronous for device memory; callers expect the bytes to be there on return.
        completeLegacyStream("cuMemsetD8");
    }

    /** Reads the native-order 64-bit word at {@code offsetBytes} (synchronous device-to-host copy). */
    public long readLong(long offsetBytes) {
        checkRange(offsetBytes, Long.BYTES);
        long[] value = {0};
        bind();
        check(JCudaDriver.cuMemcpyDtoH(Pointer.to(value), pointer.plusBytes(offsetBytes), Long.BYTES), "cuMemcpyDtoH",
                offsetBytes, Long.BYTES);
        return value[0];
    }

    /** Writes the native-order 64-bit word at {@code offsetBytes} (synchronous host-to-device copy). */
    public void writeLong(long offsetBytes, long value) {
        checkRange(offsetBytes, Long.BYTES);
        bind();
        check(JCudaDriver.cuMemcpyHtoD(pointer.plusBytes(offsetBytes), Pointer.to(new long[] {value}), Long.BYTES),
                "cuMemcpyHtoD", offsetBytes, Long.BYTES);
        completeLegacyStream("cuMemcpyHtoD");
    }

    /**
     * Sets {@code CU_POINTER_ATTRIBUTE_SYNC_MEMOPS} on the allocation: synchronous memory operations on it (copies,
     * fills) are complete when they return, even where CUDA would otherwise let them finish later. Required before a
     * third party stores into the memory behind CUDA's back (a gdrcopy CPU mapping, a NIC), so that its stores
     * cannot be overtaken by a pending CUDA write; gdrcopy's own tests set it before {@code gdr_pin_buffer}.
     */
    public void enableSyncMemops() {
        bind();
        Cuda.check(JCudaDriver.cuPointerSetAttribute(Pointer.to(new int[] {1}),
                CUpointer_attribute.CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, DevicePointer.of(address)),
                "cuPointerSetAttribute(SYNC_MEMOPS = 1, " + this + ")");
    }

    /**
     * This allocation's CUDA IPC handle ({@code cuIpcGetMemHandle}, {@link IpcMemory#HANDLE_BYTES} bytes), for another
     * process of this host to map it with {@link CudaContext#openIpcMemory}.
     */
    public byte[] exportIpcHandle() {
        bind();
        return IpcMemory.export(this);
    }

    /** Frees the memory ({@code cuMemFree}); kernels must no longer use it. */
    @Override
    int free() {
        // A private copy: the driver call must not be able to alter the pointer that callers hold.
        return JCudaDriver.cuMemFree(DevicePointer.of(address));
    }

    @Override
    String freeCall() {
        return "cuMemFree(" + sizeBytes + " bytes at 0x" + Long.toHexString(address) + " on "
                + context.device() + ")";
    }

    @Override
    String describe() {
        return sizeBytes + " bytes at 0x" + Long.toHexString(address()) + " on " + context.device();
    }

    private void bind() {
        if (isClosed()) {
            throw new IllegalStateException(this + " is closed");
        }
        context.makeCurrent();
    }

    /** Pageable host-to-device copies may return before the DMA lands; wait for the legacy stream to drain. */
    private void completeLegacyStream(String after) {
        int result = JCudaDriver.cuStreamSynchronize(LEGACY_STREAM);
        if (result != CUresult.CUDA_SUCCESS) {
            Cuda.check(result, "cuStreamSynchronize(legacy stream, after " + after + " on " + context.device() + ")");
        }
    }

    private void check(int result, String call, long offsetBytes, long lengthBytes) {
        if (result != CUresult.CUDA_SUCCESS) {
            Cuda.check(result, call + "(" + lengthBytes + " bytes at offset " + offsetBytes + " of " + this + ")");
        }
    }

    private void checkRange(long offsetBytes, long lengthBytes) {
        if (offsetBytes < 0 || lengthBytes < 0 || offsetBytes > sizeBytes - lengthBytes) {
            throw new IllegalArgumentException("range [" + offsetBytes + ", " + offsetBytes + " + " + lengthBytes
                    + ") is outside this device buffer of " + sizeBytes + " bytes");
        }
    }

    private static void requireAddressable(ByteBuffer buffer) {
        if (!buffer.isDirect() && !buffer.hasArray()) {
            throw new IllegalArgumentException("the ByteBuffer is neither direct nor backed by an accessible array"
                    + " (a read-only heap buffer?): pass a direct buffer");
        }
    }

    private static void checkArrayRange(int arrayLength, int offset, int length, String what) {
        if (offset < 0 || length < 0 || offset > arrayLength - length) {
            throw new IllegalArgumentException("range [" + offset + ", " + offset + " + " + length + ") is outside the "
                    + what + " of " + arrayLength + " bytes");
        }
    }
}
