package io.gda4j.moe.tensor;

/**
 * FP8 e4m3 (OCP "e4m3fn": 1 sign, 4 exponent bits with bias 7, 3 mantissa bits; no infinities; NaN is S.1111.111)
 * as CUDA converts to it with {@code __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3)} (on sm_90 the instruction
 * {@code cvt.rn.satfinite.e4m3x2.f32}): round to nearest, ties to even; finite values beyond the largest one (448)
 * and both infinities saturate to +-448 with their sign; any NaN, whatever its sign, becomes 0x7f; values below the
 * smallest subnormal (2^-9) round to a zero that keeps the sign. Fp8E4m3Test checks every code and every tie;
 * Fp8E4m3NvccGoldenTest checks thousands of values against the CUDA conversion built for the host.
 */
public final class Fp8E4m3 {
    /** The largest finite value, code 0x7e. */
    public static final float MAX = 448.0f;
    /** The code every NaN converts to. */
    public static final byte NAN = 0x7f;
    /** Exponent of the smallest normal value (2^-6); below it the step is 2^-9 (subnormals). */
    private static final int MIN_NORMAL_EXPONENT = -6;
    private static final int MANTISSA_BITS = 3;
    private static final int BIAS = 7;

    private Fp8E4m3() {
    }

    /** The value of {@code code} (exact in FP32); 0x7f and 0xff are NaN. */
    public static float toFloat(byte code) {
        int c = code & 0xff;
        int magnitude = c & 0x7f;
        float v;
        if (magnitude == 0x7f) {
            v = Float.NaN;
        } else {
            int e = magnitude >>> MANTISSA_BITS;
            int m = magnitude & 7;
            v = e == 0 ? Math.scalb((float) m, MIN_NORMAL_EXPONENT - MANTISSA_BITS)
                    : Math.scalb((float) (8 + m), e - BIAS - MANTISSA_BITS);
        }
        return (c & 0x80) != 0 ? -v : v;
    }

    /** The code of {@code f}: round to nearest even, saturating (see the class comment). */
    public static byte fromFloat(float f) {
        if (Float.isNaN(f)) {
            return NAN;
        }
        int sign = (Float.floatToRawIntBits(f) >>> 24) & 0x80;
        float a = Math.abs(f);
        int magnitude;
        if (a > MAX) {
            // Everything above 448 (464, the tie with the missing 480, included) saturates: SATFINITE.
            magnitude = 0x7e;
        } else if (a < 0x1p-6f) {
            // Subnormal step 2^-9: scaling by a power of two is exact, so rint (ties to even) rounds the true value.
            // A result of 8 is the smallest normal, 0x08: the encoding is continuous there.
            magnitude = (int) Math.rint(Math.scalb(a, 9));
        } else {
            int e = Math.getExponent(a);
            int q = (int) Math.rint(Math.scalb(a, MANTISSA_BITS - e));   // 8..16, exact before the rounding
            magnitude = ((e + BIAS) << MANTISSA_BITS) + (q - 8);       // q == 16 carries into the exponent
        }
        return (byte) (sign | magnitude);
    }
}
