package io.gda4j.gdrcopy;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * 8-byte loads and stores with explicit ordering over a direct {@link ByteBuffer} that views CPU-mapped GPU memory:
 * the hot path of {@link GdrMapping}, a VarHandle access of a few nanoseconds instead of a JNA call.
 *
 * <p>Why full fences: gdrcopy's usual x86 mapping is write-combining ({@code GDR_MAPPING_TYPE_WC}). Stores to WC
 * memory are weakly ordered and may sit in a write-combining buffer, while {@link VarHandle#releaseFence()} and
 * {@link VarHandle#storeStoreFence()} emit no instruction on x86 (they only restrain the compiler). HotSpot's
 * {@link VarHandle#fullFence()} is a locked instruction on x86, which orders and drains the WC buffers (Intel SDM
 * vol. 3, "Buffering of Write Combining Memory Locations"); on aarch64 it is a {@code dmb ish}.
 */
final class MappedWords {

    /** Native-order long view: the GPU reads the word in its own (little-endian) order, like the host. */
    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private final ByteBuffer buffer;
    private final int misalignment;
    private final long lastLongOffset;

    /**
     * @param buffer a direct buffer over the mapping; its first byte is offset 0 of every call
     */
    MappedWords(ByteBuffer buffer) {
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("mapped words need a direct ByteBuffer over the mapping");
        }
        this.buffer = buffer.duplicate().order(ByteOrder.nativeOrder());
        this.misalignment = this.buffer.capacity() == 0 ? 0 : this.buffer.alignmentOffset(0, Long.BYTES);
        this.lastLongOffset = (long) this.buffer.capacity() - Long.BYTES;
    }

    /**
     * Stores {@code value} after every earlier store of this thread (plain, to this mapping or anywhere else), then
     * drains it out of the CPU at once. Pairs with a GPU {@code ld.acquire.sys} of the same word.
     */
    void putLongRelease(long offsetBytes, long value) {
        int index = index(offsetBytes);
        VarHandle.fullFence();
        LONGS.setRelease(buffer, index, value);
        VarHandle.fullFence();
    }

    /**
     * As {@link #putLongRelease}, and also a Java volatile write (totally ordered with other volatile accesses).
     * Pairs with a GPU {@code ld.acquire.sys} or {@code ld.volatile} of the same word.
     */
    void putLongVolatile(long offsetBytes, long value) {
        int index = index(offsetBytes);
        VarHandle.fullFence();
        LONGS.setVolatile(buffer, index, value);
    }

    /**
     * Loads the word; later loads and stores of this thread are not performed before it. Pairs with a GPU
     * {@code st.release.sys} (or a fence then a store) of the same word. Reads cross PCIe: about a microsecond.
     */
    long getLongAcquire(long offsetBytes) {
        return (long) LONGS.getAcquire(buffer, index(offsetBytes));
    }

    /** A Java volatile read of the word; pairs with a GPU {@code st.release.sys} of the same word. */
    long getLongVolatile(long offsetBytes) {
        return (long) LONGS.getVolatile(buffer, index(offsetBytes));
    }

    /** Orders every earlier store of this thread before every later one, and drains write-combining buffers. */
    static void storeFence() {
        VarHandle.fullFence();
    }

    /** Checks that an 8-byte word at {@code offsetBytes} is inside the buffer and 8-byte aligned in memory. */
    int index(long offsetBytes) {
        if (offsetBytes < 0 || offsetBytes > lastLongOffset) {
            throw new IndexOutOfBoundsException("an 8-byte word at offset " + offsetBytes
                    + " does not fit in a mapping of " + buffer.capacity() + " bytes");
        }
        if (((offsetBytes + misalignment) & (Long.BYTES - 1)) != 0) {
            throw new IllegalArgumentException("offset " + offsetBytes + " is not 8-byte aligned in memory (the "
                    + "mapping starts " + misalignment + " bytes past an 8-byte boundary): 8-byte words must be "
                    + "naturally aligned for the GPU and the CPU to see them whole");
        }
        return (int) offsetBytes;
    }
}
