package io.gda4j.moe.tensor;

import io.gda4j.cuda.DeviceMemory;
import io.gda4j.cuda.DevicePointer;
import io.gda4j.world.HeapBuffer;
import io.gda4j.world.Rank;

import java.util.Arrays;

/**
 * A device buffer seen as a row-major tensor: an address, an element type, a shape, and the bytes the memory behind
 * it holds. The caller owns the memory; a tensor whose shape needs more bytes than that, or an address that is not
 * 16-byte aligned (rows move as 16-byte vectors), is refused when it is made.
 */
public final class DeviceTensor {
    private final long address;
    private final ElementType type;
    private final long[] shape;
    private final long capacityBytes;

    private DeviceTensor(long address, long capacityBytes, ElementType type, long... shape) {
        this.address = address;
        this.type = type;
        this.shape = shape.clone();
        this.capacityBytes = capacityBytes;
        if (address == 0 || (address & 15) != 0) {
            throw new IllegalArgumentException("a tensor's device address must be nonzero and 16-byte aligned, got 0x"
                    + Long.toHexString(address));
        }
        long needed = sizeBytes();
        if (needed > capacityBytes) {
            throw new IllegalArgumentException("a " + type + " tensor of shape " + Arrays.toString(shape) + " needs " + needed
                    + " bytes, its buffer holds " + capacityBytes);
        }
    }

    /** A tensor over {@code memory} (from its start). */
    public static DeviceTensor of(DeviceMemory memory, ElementType type, long... shape) {
        return new DeviceTensor(memory.address(), memory.sizeBytes(), type, shape);
    }

    /** A tensor at a device address with {@code capacityBytes} behind it. */
    public static DeviceTensor of(DevicePointer pointer, long capacityBytes, ElementType type, long... shape) {
        return new DeviceTensor(pointer.address(), capacityBytes, type, shape);
    }

    /** A tensor over a symmetric-heap buffer on {@code rank}. */
    public static DeviceTensor ofHeap(Rank rank, HeapBuffer buffer, ElementType type, long... shape) {
        return new DeviceTensor(rank.heapBase() + buffer.offset(), buffer.sizeBytes(), type, shape);
    }

    public long address() {
        return address;
    }

    public DevicePointer pointer() {
        return DevicePointer.of(address);
    }

    public ElementType type() {
        return type;
    }

    public long[] shape() {
        return shape.clone();
    }

    public int rank() {
        return shape.length;
    }

    public long dim(int i) {
        return shape[i];
    }

    public long capacityBytes() {
        return capacityBytes;
    }

    /** Bytes the shape covers; throws when that overflows 64 bits or a dimension is negative. */
    public long sizeBytes() {
        long n = type.bytes();
        for (long d : shape) {
            if (d < 0) {
                throw new IllegalArgumentException("tensor dimensions must be >= 0, got " + Arrays.toString(shape));
            }
            try {
                n = Math.multiplyExact(n, d);
            } catch (ArithmeticException e) {
                throw new IllegalArgumentException("tensor shape " + Arrays.toString(shape) + " overflows 64 bits of bytes");
            }
        }
        return n;
    }

    /** The same memory with another shape of the same type (checked against the capacity). */
    public DeviceTensor reshape(long... newShape) {
        return new DeviceTensor(address, capacityBytes, type, newShape);
    }

    /**
     * Checks that this is a {@code type} tensor of shape {@code expected}; a -1 in {@code expected} takes any size.
     * The message names the argument.
     */
    public DeviceTensor require(String name, ElementType expectedType, long... expected) {
        if (type != expectedType) {
            throw new IllegalArgumentException(name + " must be " + expectedType + ", got " + type);
        }
        boolean ok = shape.length == expected.length;
        for (int i = 0; ok && i < expected.length; i++) {
            ok = expected[i] < 0 || expected[i] == shape[i];
        }
        if (!ok) {
            throw new IllegalArgumentException(name + " must have shape " + Arrays.toString(expected).replace("-1", "*")
                    + ", got " + Arrays.toString(shape));
        }
        return this;
    }

    @Override
    public String toString() {
        return type + Arrays.toString(shape) + "@0x" + Long.toHexString(address);
    }
}
