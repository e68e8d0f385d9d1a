package io.gda4j.cuda;

import jcuda.driver.CUdeviceptr;

/**
 * A GPU virtual address that JCuda calls accept as a {@link CUdeviceptr} and that Java code can read as a
 * {@code long}, for device-view structs, kernel arguments and logs. It does not own memory.
 *
 * <p>JCuda keeps an address as a native pointer plus a byte offset and hides both; this subclass is the one
 * place that adds them up. Treat instances as immutable values.
 */
public final class DevicePointer extends CUdeviceptr {
    /** A zero native pointer: {@link #of(long)} puts the whole address in the byte offset. */
    private static final CUdeviceptr NULL_BASE = new CUdeviceptr();

    private DevicePointer(CUdeviceptr base, long byteOffset) {
        super(base, byteOffset);
    }

    /** A pointer to {@code address}, e.g. one read from a device-view struct or received from a peer. */
    public static DevicePointer of(long address) {
        return new DevicePointer(NULL_BASE, address);
    }

    /** Wraps a pointer that the driver filled in (cuMemAlloc, cuMemHostGetDevicePointer). */
    static DevicePointer wrap(CUdeviceptr filledByDriver) {
        return new DevicePointer(filledByDriver, 0);
    }

    /** The raw 64-bit device address. */
    public long address() {
        return getNativePointer() + getByteOffset();
    }

    /** A pointer {@code offsetBytes} further on (negative offsets go back); this one is unchanged. */
    public DevicePointer plusBytes(long offsetBytes) {
        return of(address() + offsetBytes);
    }

    /** Same as {@link #plusBytes(long)}, so JCuda-style code keeps getting a {@code DevicePointer}. */
    @Override
    public DevicePointer withByteOffset(long byteOffset) {
        return plusBytes(byteOffset);
    }

    /** Equal when the addresses are equal, whatever the internal split between base and offset. */
    @Override
    public boolean equals(Object other) {
        return other instanceof DevicePointer && ((DevicePointer) other).address() == address();
    }

    @Override
    public int hashCode() {
        return Long.hashCode(address());
    }

    @Override
    public String toString() {
        return "DevicePointer[0x" + Long.toHexString(address()) + "]";
    }
}
