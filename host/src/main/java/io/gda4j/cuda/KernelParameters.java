package io.gda4j.cuda;

import java.nio.ByteBuffer;

import jcuda.Pointer;

/**
 * The parameter list of a kernel launched over and over from a hot path ({@link Driver#launchOneThread}): built once
 * over arrays or direct buffers the caller refills before each launch (the driver copies the values at launch), so a
 * launch allocates nothing. {@link KernelArgs} is the checked, built-per-launch list everyone else uses.
 */
public final class KernelParameters {
    private final Pointer pointer;

    private KernelParameters(Pointer pointer) {
        this.pointer = pointer;
    }

    /**
     * The parameters, in order, each the first element of an {@code int[]} or {@code long[]} or the start of a
     * direct {@link ByteBuffer}.
     *
     * @throws IllegalArgumentException for another kind of cell, or a heap buffer
     */
    public static KernelParameters of(Object... cells) {
        Pointer[] each = new Pointer[cells.length];
        for (int i = 0; i < cells.length; i++) {
            Object c = cells[i];
            if (c instanceof int[] ints) {
                each[i] = Pointer.to(ints);
            } else if (c instanceof long[] longs) {
                each[i] = Pointer.to(longs);
            } else if (c instanceof ByteBuffer b && b.isDirect()) {
                each[i] = Pointer.to(b);
            } else {
                throw new IllegalArgumentException("kernel parameter " + i + " is a " + (c == null ? "null"
                        : c.getClass().getSimpleName()) + ": pass an int[], a long[] or a direct ByteBuffer");
            }
        }
        return new KernelParameters(Pointer.to(each));
    }

    Pointer pointer() {
        return pointer;
    }
}
