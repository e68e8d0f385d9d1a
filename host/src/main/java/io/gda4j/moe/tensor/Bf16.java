package io.gda4j.moe.tensor;

/**
 * bfloat16 conversions as the GPU does them: widening is exact (the high 16 bits of an FP32), narrowing rounds to
 * nearest even like {@code cvt.rn.bf16.f32} (a NaN becomes 0x7fff, as the hardware writes it).
 */
public final class Bf16 {
    private Bf16() {
    }

    public static float toFloat(short bits) {
        return Float.intBitsToFloat((bits & 0xffff) << 16);
    }

    public static short fromFloat(float f) {
        int x = Float.floatToRawIntBits(f);
        if ((x & 0x7fffffff) > 0x7f800000) {
            return (short) 0x7fff;
        }
        int upper = x >>> 16;
        int remainder = x & 0xffff;
        if (remainder > 0x8000 || (remainder == 0x8000 && (upper & 1) != 0)) {
            upper++;
        }
        return (short) upper;
    }
}
