package io.gda4j.moe.tensor;

/**
 * The low-latency dispatch's cast of BF16 rows to FP8 e4m3 with one FP32 scale per 128 channels, exactly as the
 * kernel does it ({@code gda4j/moe/fp8_block.cuh}; the two comments state the same contract, and
 * Fp8BlockNvccGoldenTest runs that header's functions against this class), so Java and CUDA agree bit for bit. For
 * each block of {@value #BLOCK} channels of a row:
 * <ol>
 *   <li>{@code amax} = the largest {@code |x|} of the block, each BF16 value widened exactly to FP32, starting from
 *       +0 and ignoring NaN (CUDA's {@code fmaxf}; the order does not matter, a maximum is exact);</li>
 *   <li>{@code amax = max(amax, }{@value #AMAX_FLOOR}{@code f)}: an all-zero block gets a finite, nonzero scale;</li>
 *   <li>{@code scale = amax / 448} in FP32, IEEE round to nearest ({@code __fdiv_rn} on the device);</li>
 *   <li>with power-of-two scales (UE8M0), {@code scale} is rounded up to the next power of two by bit arithmetic:
 *       a nonzero mantissa is cleared and the exponent raised by one (exact; no {@code powf}, no {@code log2f});</li>
 *   <li>each element: {@code q = fp8(x / scale)}, the division IEEE round to nearest ({@code __fdiv_rn}), the cast
 *       {@link Fp8E4m3#fromFloat} ({@code __nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3)}).</li>
 * </ol>
 * The receiver gets {@code q} and {@code scale}; {@code q * scale} approximates {@code x}. Non-finite inputs follow
 * the same formulas (an infinity makes the block's scale infinite, its finite values 0 and itself NaN, 0x7f).
 */
public final class Fp8BlockQuantizer {
    /** The smallest amax a scale is computed from (DeepEP's choice). */
    public static final float AMAX_FLOOR = 1e-4f;
    /** Channels per scale: DeepEP's per-128-channel quantisation (both modes' FP8 rows carry one per block). */
    public static final int BLOCK = 128;

    private Fp8BlockQuantizer() {
    }

    /** The scale of the {@value #BLOCK} BF16 values of {@code x} from {@code offset} (steps 1 to 4). */
    public static float scale(short[] x, int offset, boolean powerOfTwo) {
        float amax = 0.0f;
        for (int i = 0; i < BLOCK; i++) {
            float v = Math.abs(Bf16.toFloat(x[offset + i]));
            if (v > amax) {   // false for NaN: fmaxf ignores it
                amax = v;
            }
        }
        float scale = Math.max(amax, AMAX_FLOOR) / Fp8E4m3.MAX;
        return powerOfTwo ? roundUpToPowerOfTwo(scale) : scale;
    }

    /**
     * The smallest power of two at or above a positive finite {@code scale} (UE8M0: an exponent with no mantissa).
     * Infinity and NaN are returned unchanged.
     */
    public static float roundUpToPowerOfTwo(float scale) {
        int bits = Float.floatToRawIntBits(scale);
        if ((bits & 0x7fffff) == 0 || (bits & 0x7f800000) == 0x7f800000) {
            return scale;
        }
        if ((bits & 0x7f800000) == 0) {
            throw new IllegalArgumentException("subnormal scale " + scale + ": amax is floored at " + AMAX_FLOOR);
        }
        return Float.intBitsToFloat((bits & 0xff800000) + 0x00800000);
    }

    /** Step 5: one element. */
    public static byte quantize(short x, float scale) {
        return Fp8E4m3.fromFloat(Bf16.toFloat(x) / scale);
    }

    /**
     * Casts {@code hidden} BF16 values of {@code x} from {@code xOffset} into {@code q} from {@code qOffset}, writing
     * {@code hidden / 128} scales into {@code scales} from {@code scalesOffset}.
     */
    public static void quantizeRow(short[] x, int xOffset, int hidden, boolean powerOfTwo, byte[] q, int qOffset,
                                   float[] scales, int scalesOffset) {
        if (hidden % BLOCK != 0) {
            throw new IllegalArgumentException("hidden must be a multiple of " + BLOCK + " for FP8, got " + hidden);
        }
        for (int b = 0; b < hidden / BLOCK; b++) {
            float scale = scale(x, xOffset + b * BLOCK, powerOfTwo);
            scales[scalesOffset + b] = scale;
            for (int i = 0; i < BLOCK; i++) {
                q[qOffset + b * BLOCK + i] = quantize(x[xOffset + b * BLOCK + i], scale);
            }
        }
    }
}
