package io.gda4j.cuda;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;

/**
 * A device pointer whose address can be changed, for loops that call the driver once per item and must not allocate
 * (the host proxy issues a copy per trigger). {@link DevicePointer} is the immutable value everyone else should use.
 *
 * <p>Owned by one thread; never hand it to code that keeps it, since the next {@link #set(long)} moves it. JCuda
 * reads a pointer as its native base plus its byte offset when a call is made; this class keeps the base at zero and
 * rewrites the offset, which JCuda keeps private, through a VarHandle (JCuda sits on the class path, where its
 * packages are open).
 */
public final class MutableDevicePointer extends CUdeviceptr {
    private static final VarHandle BYTE_OFFSET;

    static {
        try {
            BYTE_OFFSET = MethodHandles.privateLookupIn(Pointer.class, MethodHandles.lookup())
                    .findVarHandle(Pointer.class, "byteOffset", long.class);
        } catch (ReflectiveOperationException | IllegalAccessError e) {
            throw new ExceptionInInitializerError("cannot reach jcuda.Pointer.byteOffset (" + e
                    + "): put JCuda on the class path, not the module path");
        }
    }

    /** A pointer to address 0 until {@link #set(long)}. */
    public MutableDevicePointer() {
        super();
    }

    /** Points this object at {@code address} (plain write: the owning thread's next driver call sees it). */
    public MutableDevicePointer set(long address) {
        BYTE_OFFSET.set(this, address);
        return this;
    }

    /** The raw 64-bit device address. */
    public long address() {
        return getNativePointer() + getByteOffset();
    }

    @Override
    public String toString() {
        return "MutableDevicePointer[0x" + Long.toHexString(address()) + "]";
    }
}
