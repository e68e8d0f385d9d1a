package io.gda4j.moe.core;

/**
 * Exact arithmetic for the MoE sizings (io.gda4j.moe.ht.HighThroughputSizing, io.gda4j.moe.ll.LowLatencySizing): a
 * size that overflows 64 bits, or an index past the kernels' 32-bit ints, is refused with a message that names the
 * quantity and the config it came from, so every refusal of either mode reads the same.
 */
public final class ExactSizes {
    /** Alignment of every section: a GPU L2 line pair, and enough for any vector load. */
    public static final int SECTION_ALIGN = 256;

    private final String config;

    /** @param config the config class the messages name, e.g. "MoeConfig" */
    public ExactSizes(String config) {
        this.config = config;
    }

    /** {@code v} rounded up to a multiple of {@code a} (a power of two). */
    public static long align(long v, long a) {
        return Math.addExact(v, a - 1) & -a;
    }

    public long mul(String what, long a, long b) {
        try {
            return Math.multiplyExact(a, b);
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(config + " too large: " + what + " = " + a + " x " + b
                    + " overflows 64 bits");
        }
    }

    public long add(String what, long a, long b) {
        try {
            return Math.addExact(a, b);
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(config + " too large: " + what + " = " + a + " + " + b
                    + " overflows 64 bits");
        }
    }

    /** {@code v} as an int, or refused: the kernels index it with 32-bit ints. */
    public int toInt(String what, long v) {
        if (v > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(config + " too large: " + what + " = " + v + " exceeds "
                    + Integer.MAX_VALUE + ", the largest 32-bit index the kernels use; lower the sizes that make it up");
        }
        return (int) v;
    }

    /** Where the section after one of {@code bytes} at {@code at} begins: aligned to {@link #SECTION_ALIGN}. */
    public long next(long at, String what, long bytes) {
        try {
            return align(Math.addExact(at, bytes), SECTION_ALIGN);
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(config + " too large: " + what + " (" + bytes + " bytes) overflows 64"
                    + " bits");
        }
    }
}
