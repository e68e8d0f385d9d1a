package io.gda4j.proxy;

import java.nio.ByteBuffer;
import java.util.Locale;

/**
 * The trigger FIFO between a GPU and its host proxy, byte for byte and bit for bit: the FIFO region in pinned host
 * memory, the device-side channel object and the 16-byte trigger. Mirrored name for name by
 * {@code device-ptx/include/gda4j/transport/proxy/fifo.cuh} (namespace {@code gda4j::proxy::TriggerFifoDescriptor}); the
 * encoders here and there write the same words, which TriggerFifoLayoutTest checks with g++.
 *
 * <pre>
 *  FIFO region, pinned host memory mapped into the GPU (one per channel = ordered pair rank -&gt; peer)
 *   0                  64                 128                128 + 16 * capacity
 *   +------------------+------------------+------------------------------------+
 *   | tail  | (pad)    | state | (pad)    | ring: capacity slots of 16 bytes   |
 *   +------------------+------------------+------------------------------------+
 *
 *  ProxyChannel, GPU memory (PeerEntry.handle points here)
 *   0        8        16       20       24       28       32           64      128          192      256
 *   +--------+--------+--------+--------+--------+--------+------------+-------+------------+--------+
 *   | ring   |control |capacity|cap_log2| rank   | peer   | reserved   | head  | tail_cache | done   |
 *   +--------+--------+--------+--------+--------+--------+------------+-------+------------+--------+
 *
 *  Trigger: one 16-byte slot {word0, word1}; PUT_SIGNAL takes two consecutive slots (the put, then a SIGNAL).
 *  Bit 63 of both words is the lap bit of the slot's position p: 1 when p / capacity is even, 0 when odd.
 *
 *  PUT, PUT_SIGNAL (first slot)
 *   word0: 63 lap | 62..60 kind | 59..38 size[21:0]  | 37..0 dst_offset
 *   word1: 63 lap | 62..58 zero | 57..56 dst_memory  | 55..54 src_memory | 53..38 size[37:22] | 37..0 src_offset
 *  SIGNAL, ATOMIC_ADD (and PUT_SIGNAL's second slot, kind SIGNAL)
 *   word0: 63 lap | 62..60 kind | 59 op (0 set, 1 add) | 58 value[63] | 57..56 dst_memory | 55..38 zero
 *          | 37..0 word_offset (8-byte aligned)
 *   word1: 63 lap | 62..0 value[62:0]
 *  FLUSH, NOP
 *   word0: 63 lap | 62..60 kind | 59..0 zero
 *   word1: 63 lap | 62..0 cookie (NOP: free for the pusher; FLUSH: zero)
 * </pre>
 *
 * <p>Ordering contract of the shared words:
 * <ul>
 *   <li>slot: the GPU publishes with one 16-byte {@code st.release.sys} (a fence and two relaxed stores for a
 *       two-slot trigger); the proxy reads word1 with {@code getAcquire}, then word0, and takes the slot only when
 *       both carry the lap bit its position expects. The host never clears a slot.</li>
 *   <li>tail: the proxy {@code putLongRelease}s it after handling (so its reads of a slot happen before the GPU
 *       reuses it); the GPU reads it with {@code ld.acquire.sys} only when the ring looks full.</li>
 *   <li>state: the proxy {@code putLongRelease}s {@link #STATE_STOPPED} or {@link #STATE_FAILED} when it will pop no
 *       more; the GPU reads it in its slow paths and fails with ERROR_PROXY_STOPPED instead of waiting out the
 *       timeout.</li>
 *   <li>head and tail_cache belong to the GPU; done is written by the proxy's CUDA stream
 *       ({@code cuStreamWriteValue64}, after the work before the FLUSH) and read by the GPU.</li>
 * </ul>
 * Offsets address the symmetric heap ({@link #MEMORY_HEAP}; ids 1..3 are reserved for registered memories) and, like
 * sizes, are below 2^38. Encoders take the fields and return words without lap bits; the {@code check*} methods say
 * in a sentence what does not fit.
 */
public final class TriggerFifoDescriptor {
    public static final int KIND_NOP = 0;
    public static final int KIND_PUT = 1;
    public static final int KIND_SIGNAL = 2;
    public static final int KIND_PUT_SIGNAL = 3;
    public static final int KIND_ATOMIC_ADD = 4;
    public static final int KIND_FLUSH = 5;

    public static final int SIGNAL_OP_SET = 0;
    public static final int SIGNAL_OP_ADD = 1;
    public static final int MEMORY_HEAP = 0;

    public static final int TRIGGER_BYTES = 16;
    public static final int WORD0_OFFSET = 0;
    public static final int WORD1_OFFSET = 8;

    public static final int LAP_SHIFT = 63;
    public static final int KIND_SHIFT = 60;
    public static final int KIND_BITS = 3;
    public static final int OFFSET_BITS = 38;
    public static final int SIZE_BITS = 38;
    public static final int SIZE_LOW_SHIFT = 38;
    public static final int SIZE_LOW_BITS = 22;
    public static final int SIZE_HIGH_SHIFT = 38;
    public static final int SIZE_HIGH_BITS = 16;
    public static final int MEMORY_ID_BITS = 2;
    public static final int SRC_MEMORY_SHIFT = 54;
    public static final int DST_MEMORY_SHIFT = 56;
    public static final int SIGNAL_OP_SHIFT = 59;
    public static final int VALUE_TOP_SHIFT = 58;
    public static final int SIGNAL_MEMORY_SHIFT = 56;
    public static final int PAYLOAD_BITS = 63;

    public static final long LAP_MASK = 1L << LAP_SHIFT;
    public static final long OFFSET_MASK = (1L << OFFSET_BITS) - 1;
    public static final long PAYLOAD_MASK = (1L << PAYLOAD_BITS) - 1;
    /** Offsets and sizes must be below this: 2^38 bytes, 256 GiB. */
    public static final long FIELD_LIMIT = 1L << OFFSET_BITS;

    public static final int CONTROL_TAIL_OFFSET = 0;
    public static final int CONTROL_STATE_OFFSET = 64;
    public static final int RING_OFFSET = 128;
    public static final int STATE_RUNNING = 0;
    public static final int STATE_STOPPED = 1;
    public static final int STATE_FAILED = 2;

    public static final int CHANNEL_RING_OFFSET = 0;
    public static final int CHANNEL_CONTROL_OFFSET = 8;
    public static final int CHANNEL_CAPACITY_OFFSET = 16;
    public static final int CHANNEL_CAPACITY_LOG2_OFFSET = 20;
    public static final int CHANNEL_RANK_OFFSET = 24;
    public static final int CHANNEL_PEER_OFFSET = 28;
    public static final int CHANNEL_HEAD_OFFSET = 64;
    public static final int CHANNEL_TAIL_CACHE_OFFSET = 128;
    public static final int CHANNEL_DONE_OFFSET = 192;
    public static final int CHANNEL_LENGTH = 256;

    public static final int MIN_CAPACITY = 2;
    public static final int MAX_CAPACITY = 1 << 20;

    private static final long SIZE_LOW_MASK = (1L << SIZE_LOW_BITS) - 1;
    private static final long SIZE_HIGH_MASK = (1L << SIZE_HIGH_BITS) - 1;
    private static final long MEMORY_MASK = (1L << MEMORY_ID_BITS) - 1;
    private static final long KIND_MASK = (1L << KIND_BITS) - 1;

    private TriggerFifoDescriptor() {
    }

    // ---- layout helpers

    /** Bytes of a FIFO region (control block and ring) of {@code capacity} slots. */
    public static int regionBytes(int capacity) {
        checkCapacity(capacity);
        return RING_OFFSET + TRIGGER_BYTES * capacity;
    }

    /** Byte offset of {@code position}'s slot from the start of the region. */
    public static int slotOffset(long position, int capacity) {
        return RING_OFFSET + (int) (position & (capacity - 1)) * TRIGGER_BYTES;
    }

    /** The lap bit (as bit 63) that {@code position}'s slot carries in both words: 1 on even laps. */
    public static long lapBits(long position, int capacityLog2) {
        return (~(position >>> capacityLog2) & 1L) << LAP_SHIFT;
    }

    /**
     * Checks that {@code region} can hold a FIFO of {@code capacity} slots and is direct: its words are shared with
     * the GPU (mapped pinned memory) and read with acquire/release, which the JVM refuses on heap buffers from JDK 22
     * on; a heap buffer is refused here on every JDK, with a message instead of that failure.
     */
    public static void checkRegion(ByteBuffer region, int capacity) {
        int need = regionBytes(capacity);
        if (region.capacity() < need) {
            throw new IllegalArgumentException("a FIFO of " + capacity + " slots needs a region of " + need
                    + " bytes, got " + region.capacity());
        }
        if (!region.isDirect()) {
            throw new IllegalArgumentException("a trigger FIFO region must be a direct buffer (mapped pinned memory, or"
                    + " ByteBuffer.allocateDirect in a test), got a heap buffer");
        }
    }

    /** Throws unless {@code capacity} is a power of two in [MIN_CAPACITY, MAX_CAPACITY]. */
    public static void checkCapacity(int capacity) {
        if (capacity < MIN_CAPACITY || capacity > MAX_CAPACITY || Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("a trigger FIFO holds a power of two of slots between " + MIN_CAPACITY
                    + " and " + MAX_CAPACITY + ", got " + capacity);
        }
    }

    /** Slots a trigger of this kind (read from its first word) occupies: 2 for PUT_SIGNAL, else 1. */
    public static int slots(long word0) {
        return kind(word0) == KIND_PUT_SIGNAL ? 2 : 1;
    }

    // ---- encoders (words without lap bits)

    public static long putWord0(int kind, long dstOffset, long sizeBytes) {
        return (long) kind << KIND_SHIFT | (sizeBytes & SIZE_LOW_MASK) << SIZE_LOW_SHIFT | dstOffset;
    }

    public static long putWord1(long srcOffset, long sizeBytes, int dstMemory, int srcMemory) {
        return (long) dstMemory << DST_MEMORY_SHIFT | (long) srcMemory << SRC_MEMORY_SHIFT
                | (sizeBytes >>> SIZE_LOW_BITS) << SIZE_HIGH_SHIFT | srcOffset;
    }

    public static long signalWord0(int kind, int signalOp, long wordOffset, long value, int dstMemory) {
        return (long) kind << KIND_SHIFT | (long) signalOp << SIGNAL_OP_SHIFT | (value >>> 63) << VALUE_TOP_SHIFT
                | (long) dstMemory << SIGNAL_MEMORY_SHIFT | wordOffset;
    }

    public static long signalWord1(long value) {
        return value & PAYLOAD_MASK;
    }

    public static long controlWord0(int kind) {
        return (long) kind << KIND_SHIFT;
    }

    public static long nopWord1(long cookie) {
        return cookie & PAYLOAD_MASK;
    }

    // ---- range checks: true when the fields fit (the device checks the same before it pushes)

    public static boolean putFits(long dstOffset, long srcOffset, long sizeBytes, int dstMemory, int srcMemory) {
        return ((dstOffset | srcOffset) >>> OFFSET_BITS) == 0 && (sizeBytes >>> SIZE_BITS) == 0
                && ((dstMemory | srcMemory) >>> MEMORY_ID_BITS) == 0;
    }

    public static boolean signalFits(long wordOffset, int signalOp, int dstMemory) {
        return (wordOffset >>> OFFSET_BITS) == 0 && (wordOffset & 7) == 0 && (signalOp == SIGNAL_OP_SET
                || signalOp == SIGNAL_OP_ADD) && (dstMemory >>> MEMORY_ID_BITS) == 0;
    }

    /** Throws an IllegalArgumentException naming the field that does not fit a PUT trigger. */
    public static void checkPut(long dstOffset, long srcOffset, long sizeBytes, int dstMemory, int srcMemory) {
        checkField("destination offset", dstOffset);
        checkField("source offset", srcOffset);
        checkField("size", sizeBytes);
        checkMemory("destination", dstMemory);
        checkMemory("source", srcMemory);
    }

    /** Throws an IllegalArgumentException naming the field that does not fit a SIGNAL or ATOMIC_ADD trigger. */
    public static void checkSignal(long wordOffset, int signalOp, int dstMemory) {
        checkField("signal word offset", wordOffset);
        if ((wordOffset & 7) != 0) {
            throw new IllegalArgumentException("signal word offset 0x" + Long.toHexString(wordOffset)
                    + " is not 8-byte aligned");
        }
        if (signalOp != SIGNAL_OP_SET && signalOp != SIGNAL_OP_ADD) {
            throw new IllegalArgumentException("signal op " + signalOp + " is neither SET (0) nor ADD (1)");
        }
        checkMemory("signal word", dstMemory);
    }

    private static void checkField(String what, long value) {
        if ((value >>> OFFSET_BITS) != 0) {
            throw new IllegalArgumentException(String.format(Locale.ROOT,
                    "%s 0x%x does not fit a proxy trigger: offsets and sizes must be below 2^%d (0x%x)",
                    what, value, OFFSET_BITS, FIELD_LIMIT));
        }
    }

    private static void checkMemory(String what, int memory) {
        if ((memory >>> MEMORY_ID_BITS) != 0) {
            throw new IllegalArgumentException(what + " memory id " + memory + " does not fit a proxy trigger (0.."
                    + MEMORY_MASK + ")");
        }
    }

    // ---- decoders (lap bits ignored)

    public static int kind(long word0) {
        return (int) (word0 >>> KIND_SHIFT & KIND_MASK);
    }

    public static long dstOffset(long word0) {
        return word0 & OFFSET_MASK;
    }

    public static long srcOffset(long word1) {
        return word1 & OFFSET_MASK;
    }

    public static long sizeBytes(long word0, long word1) {
        return (word0 >>> SIZE_LOW_SHIFT & SIZE_LOW_MASK) | (word1 >>> SIZE_HIGH_SHIFT & SIZE_HIGH_MASK) << SIZE_LOW_BITS;
    }

    public static int dstMemory(long word1) {
        return (int) (word1 >>> DST_MEMORY_SHIFT & MEMORY_MASK);
    }

    public static int srcMemory(long word1) {
        return (int) (word1 >>> SRC_MEMORY_SHIFT & MEMORY_MASK);
    }

    public static int signalOp(long word0) {
        return (int) (word0 >>> SIGNAL_OP_SHIFT & 1);
    }

    public static long wordOffset(long word0) {
        return word0 & OFFSET_MASK;
    }

    public static int signalMemory(long word0) {
        return (int) (word0 >>> SIGNAL_MEMORY_SHIFT & MEMORY_MASK);
    }

    public static long signalValue(long word0, long word1) {
        return (word0 >>> VALUE_TOP_SHIFT & 1) << 63 | (word1 & PAYLOAD_MASK);
    }

    public static long cookie(long word1) {
        return word1 & PAYLOAD_MASK;
    }

    /** The name of a kind, as the device API and the docs say it. */
    public static String kindName(int kind) {
        switch (kind) {
            case KIND_NOP: return "NOP";
            case KIND_PUT: return "PUT";
            case KIND_SIGNAL: return "SIGNAL";
            case KIND_PUT_SIGNAL: return "PUT_SIGNAL";
            case KIND_ATOMIC_ADD: return "ATOMIC_ADD";
            case KIND_FLUSH: return "FLUSH";
            default: return "kind " + kind;
        }
    }
}
