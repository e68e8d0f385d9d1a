package io.gda4j.mlx5;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Big-endian accessors over any {@link ByteBuffer}, whatever its own byte order, at absolute indexes.
 *
 * <p>mlx5 segments and CQEs are big-endian while the buffers mapped by JNA or JCuda are usually native-order, so
 * every access names its byte order here instead of trusting {@link ByteBuffer#order()}. Plain accessors are for
 * bytes that a later release store publishes and work on any buffer; the acquire/release variants need a naturally
 * aligned address in a direct buffer (see {@link #requireDirect}).
 */
final class BigEndian {
    private static final VarHandle SHORT = MethodHandles.byteBufferViewVarHandle(short[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle INT = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle LONG = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private BigEndian() {
    }

    /**
     * The ordered accessors are for words a NIC or a GPU shares with the JVM, which live in mapped (direct) memory; a
     * heap buffer is refused on every JDK, not only on JDK 22+, whose VarHandles refuse atomic access to heap buffers.
     */
    static ByteBuffer requireDirect(ByteBuffer buffer) {
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("acquire/release access needs a direct buffer (mapped memory, or"
                    + " ByteBuffer.allocateDirect in a test), got a heap buffer: rings and doorbell records are shared"
                    + " with a NIC or GPU, and the JVM offers ordered access to heap buffers only on JDKs before 22");
        }
        return buffer;
    }

    static int getShort(ByteBuffer buffer, int index) {
        return Short.toUnsignedInt((short) SHORT.get(buffer, index));
    }

    static void putShort(ByteBuffer buffer, int index, int value) {
        SHORT.set(buffer, index, (short) value);
    }

    static int getInt(ByteBuffer buffer, int index) {
        return (int) INT.get(buffer, index);
    }

    static void putInt(ByteBuffer buffer, int index, int value) {
        INT.set(buffer, index, value);
    }

    /** Acquire load of a 4-byte-aligned word; pairs with {@link #putIntRelease} or a device release store. */
    static int getIntAcquire(ByteBuffer buffer, int index) {
        return (int) INT.getAcquire(requireDirect(buffer), index);
    }

    /** Release store of a 4-byte-aligned word: every earlier store to the buffer is visible before it. */
    static void putIntRelease(ByteBuffer buffer, int index, int value) {
        INT.setRelease(requireDirect(buffer), index, value);
    }

    static long getLong(ByteBuffer buffer, int index) {
        return (long) LONG.get(buffer, index);
    }

    static void putLong(ByteBuffer buffer, int index, long value) {
        LONG.set(buffer, index, value);
    }

    /** Acquire load of an 8-byte-aligned word; pairs with {@link #putLongRelease} or a device release store. */
    static long getLongAcquire(ByteBuffer buffer, int index) {
        return (long) LONG.getAcquire(requireDirect(buffer), index);
    }

    /** Release store of an 8-byte-aligned word: every earlier store to the buffer is visible before it. */
    static void putLongRelease(ByteBuffer buffer, int index, long value) {
        LONG.setRelease(requireDirect(buffer), index, value);
    }

    static int getUnsignedByte(ByteBuffer buffer, int index) {
        return Byte.toUnsignedInt(buffer.get(index));
    }
}
