package io.gda4j.cuda;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;

import jcuda.NativePointerObject;
import jcuda.Pointer;

/**
 * The typed argument list of one kernel launch, in parameter order: {@code KernelArgs.create().pointer(buf)
 * .u32(n).f32(scale)}. Each argument remembers its type and size, so a launch can be checked against the kernel's
 * PTX signature and an error message can list what was passed. Not thread-safe; build one per launch site.
 */
public final class KernelArgs {
    /** Argument kinds: the name shown in messages and the size the kernel parameter must have (0: a struct's own). */
    private enum Kind {
        POINTER("ptr", 8), ADDRESS("addr", 8), I32("i32", 4), U32("u32", 4), I64("i64", 8), U64("u64", 8),
        F32("f32", 4), F64("f64", 8), STRUCT("struct", 0);

        final String label;
        final int sizeBytes;

        Kind(String label, int sizeBytes) {
            this.label = label;
            this.sizeBytes = sizeBytes;
        }
    }

    private Kind[] kinds = new Kind[8];
    private long[] bits = new long[8];
    /** The bytes of each STRUCT argument (null for the others). */
    private byte[][] structs = new byte[8][];
    private int count;

    private KernelArgs() {
    }

    /** An empty argument list. */
    public static KernelArgs create() {
        return new KernelArgs();
    }

    /** A device pointer parameter ({@code T*}). */
    public KernelArgs pointer(DevicePointer pointer) {
        Objects.requireNonNull(pointer, "pointer argument; pass DevicePointer.of(0) for a null pointer");
        return add(Kind.POINTER, pointer.address());
    }

    /** A 64-bit device address passed as a pointer-sized parameter (a {@code T*} or {@code uint64_t}). */
    public KernelArgs address(long deviceAddress) {
        return add(Kind.ADDRESS, deviceAddress);
    }

    /** A signed 32-bit parameter ({@code int}). */
    public KernelArgs i32(int value) {
        return add(Kind.I32, value);
    }

    /** An unsigned 32-bit parameter ({@code unsigned int}); Java's int carries the bits, shown unsigned. */
    public KernelArgs u32(int value) {
        return add(Kind.U32, Integer.toUnsignedLong(value));
    }

    /** A signed 64-bit parameter ({@code long long}). */
    public KernelArgs i64(long value) {
        return add(Kind.I64, value);
    }

    /** An unsigned 64-bit parameter ({@code unsigned long long}); Java's long carries the bits, shown unsigned. */
    public KernelArgs u64(long value) {
        return add(Kind.U64, value);
    }

    /** A 32-bit float parameter. */
    public KernelArgs f32(float value) {
        return add(Kind.F32, Float.floatToRawIntBits(value));
    }

    /** A 64-bit float parameter. */
    public KernelArgs f64(double value) {
        return add(Kind.F64, Double.doubleToRawLongBits(value));
    }

    /**
     * A struct passed by value ({@code const __grid_constant__ T p}): its bytes in the kernel's layout, e.g. a params
     * block a {@code *ParamsDescriptor} lays out, from {@code value}'s position to its limit (copied now; the buffer
     * is not moved). The kernel then reads its fields from kernel parameter memory, without the memory round trip a
     * block in device memory costs each kernel.
     */
    public KernelArgs struct(ByteBuffer value) {
        Objects.requireNonNull(value, "struct argument");
        byte[] bytes = new byte[value.remaining()];
        value.duplicate().get(bytes);
        add(Kind.STRUCT, bytes.length);
        structs[count - 1] = bytes;
        return this;
    }

    /** The number of arguments. */
    public int count() {
        return count;
    }

    /** The size in bytes of argument {@code index} (4 or 8, a struct's length), for checking against a signature. */
    int sizeBytes(int index) {
        Objects.checkIndex(index, count);
        return kinds[index] == Kind.STRUCT ? structs[index].length : kinds[index].sizeBytes;
    }

    /**
     * The {@code void** kernelParams} array that {@code cuLaunchKernel} expects: one pointer per argument to a
     * copy of its value. A fresh copy each call, so later changes to this list do not affect a queued launch.
     */
    public Pointer toPointer() {
        NativePointerObject[] values = new NativePointerObject[count];
        for (int i = 0; i < count; i++) {
            // Values travel as raw int or long bits: pointers too, so JCuda never rewrites a DevicePointer object.
            if (kinds[i] == Kind.STRUCT) {
                values[i] = Pointer.to(structs[i]);  // struct() copied it, and nothing writes it after
            } else {
                values[i] = kinds[i].sizeBytes == Integer.BYTES
                        ? Pointer.to(new int[] {(int) bits[i]})
                        : Pointer.to(new long[] {bits[i]});
            }
        }
        return Pointer.to(values);
    }

    /** Lists the arguments, e.g. {@code [ptr 0x7f5a00000000, u32 1024, f32 0.5, struct[240]]}. */
    @Override
    public String toString() {
        StringBuilder text = new StringBuilder("[");
        for (int i = 0; i < count; i++) {
            if (i > 0) {
                text.append(", ");
            }
            if (kinds[i] == Kind.STRUCT) {
                text.append(kinds[i].label).append('[').append(structs[i].length).append(']');
            } else {
                text.append(kinds[i].label).append(' ').append(format(kinds[i], bits[i]));
            }
        }
        return text.append(']').toString();
    }

    private static String format(Kind kind, long value) {
        switch (kind) {
            case POINTER:
            case ADDRESS:
                return "0x" + Long.toHexString(value);
            case U64:
                return Long.toUnsignedString(value);
            case F32:
                return Float.toString(Float.intBitsToFloat((int) value));
            case F64:
                return Double.toString(Double.longBitsToDouble(value));
            default:
                return Long.toString(value);
        }
    }

    private KernelArgs add(Kind kind, long value) {
        if (count == kinds.length) {
            kinds = Arrays.copyOf(kinds, count * 2);
            bits = Arrays.copyOf(bits, count * 2);
            structs = Arrays.copyOf(structs, count * 2);
        }
        kinds[count] = kind;
        bits[count] = value;
        count++;
        return this;
    }
}
