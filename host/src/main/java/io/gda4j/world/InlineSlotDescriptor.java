package io.gda4j.world;

/**
 * The 16-byte inline slot of {@code put_inline} / {@code wait_inline}, as {@code gda4j/layout/inline_slot.cuh} lays it
 * out (same names, same values):
 *
 * <pre>
 *   0                 8                 16
 *   +--------+--------+--------+--------+
 *   | lo32   | seq    | hi32   | seq    |
 *   +--------+--------+--------+--------+
 *   half 0 (u64)      half 1 (u64)
 * </pre>
 *
 * Each half is one little-endian 64-bit element, data in the low 32 bits and the sequence in the high 32. The device
 * stores and loads the slot as {@code v2.u64}, whose elements are each single-copy atomic under the PTX memory model;
 * a NIC (one inline RDMA WRITE) or the emulated NIC (two 8-byte stores, {@code EmulatedEngine}) writes the halves in
 * any order. A reader takes the slot only when both halves carry the same sequence, at or after the one it waits for
 * ({@link #isWholeAtOrAfter}): halves of two messages carry two sequences, so a sender may overwrite the slot
 * without waiting and the reader still never returns a value that was not sent whole.
 */
public final class InlineSlotDescriptor {
    public static final int SIZE = 16;
    public static final int ALIGNMENT = 16;
    public static final int HALF_SIZE = 8;
    public static final int LO_HALF_OFFSET = 0;
    public static final int HI_HALF_OFFSET = 8;
    public static final int SEQ_SHIFT = 32;

    private InlineSlotDescriptor() {
    }

    /** A half as one 64-bit element: {@code data} in the low 32 bits, {@code seq} in the high 32. */
    public static long half(int data, int seq) {
        return (long) seq << SEQ_SHIFT | Integer.toUnsignedLong(data);
    }

    public static int dataOf(long half) {
        return (int) half;
    }

    public static int seqOf(long half) {
        return (int) (half >>> SEQ_SHIFT);
    }

    /** The rule {@code wait_inline} applies: one message in both halves, with sequence {@code seq} or later. */
    public static boolean isWholeAtOrAfter(long loHalf, long hiHalf, int seq) {
        return seqOf(loHalf) == seqOf(hiHalf) && seqOf(loHalf) - seq >= 0;
    }

    /** The 8-byte value the two halves carry. */
    public static long valueOf(long loHalf, long hiHalf) {
        return (long) dataOf(hiHalf) << 32 | Integer.toUnsignedLong(dataOf(loHalf));
    }
}
