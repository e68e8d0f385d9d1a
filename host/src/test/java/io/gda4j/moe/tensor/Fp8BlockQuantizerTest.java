package io.gda4j.moe.tensor;

import io.gda4j.moe.check.MoeRouting;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The per-128-channel FP8 cast of Fp8BlockQuantizer against its documented contract. */
class Fp8BlockQuantizerTest {
    private static short[] block(float... head) {
        short[] x = new short[Fp8BlockQuantizer.BLOCK];
        for (int i = 0; i < head.length; i++) {
            x[i] = Bf16.fromFloat(head[i]);
        }
        return x;
    }

    @Test
    void scaleIsAmaxOver448() {
        short[] x = block(1f, -3f, 2f);
        assertEquals(3f / 448f, Fp8BlockQuantizer.scale(x, 0, false));
        assertEquals(Float.floatToRawIntBits(3f / 448f), Float.floatToRawIntBits(Fp8BlockQuantizer.scale(x, 0, false)));
    }

    @Test
    void anAllZeroBlockUsesTheFloorAndQuantizesToSignedZeros() {
        short[] x = block(0f, -0f);
        float scale = Fp8BlockQuantizer.scale(x, 0, false);
        assertEquals(Fp8BlockQuantizer.AMAX_FLOOR / 448f, scale);
        assertEquals((byte) 0x00, Fp8BlockQuantizer.quantize(x[0], scale));
        assertEquals((byte) 0x80, Fp8BlockQuantizer.quantize(x[1], scale));
    }

    @Test
    void nanIsIgnoredByAmaxAndBecomes0x7f() {
        short[] x = block(Float.NaN, 2f, -1f);
        float scale = Fp8BlockQuantizer.scale(x, 0, false);
        assertEquals(2f / 448f, scale);
        assertEquals((byte) 0x7f, Fp8BlockQuantizer.quantize(x[0], scale));
        assertEquals((byte) 0x7e, Fp8BlockQuantizer.quantize(x[1], scale), "amax maps to 448");
    }

    @Test
    void theLargestMagnitudeAlwaysMapsTo448() {
        Random rnd = new Random(1);
        for (int i = 0; i < 20000; i++) {
            float amax = (float) Math.scalb(1.0 + rnd.nextDouble(), rnd.nextInt(80) - 13);
            short[] x = block(amax * 0.5f, -amax, amax * 0.25f);
            float bf = Math.abs(Bf16.toFloat(x[1]));
            if (bf < Fp8BlockQuantizer.AMAX_FLOOR) {
                continue;
            }
            assertEquals((byte) 0xfe, Fp8BlockQuantizer.quantize(x[1], Fp8BlockQuantizer.scale(x, 0, false)), "" + amax);
            float pow2 = -Fp8E4m3.toFloat(Fp8BlockQuantizer.quantize(x[1], Fp8BlockQuantizer.scale(x, 0, true)));
            assertTrue(pow2 >= 224f && pow2 <= 448f, "power-of-two scale: amax / scale in (224, 448], got " + pow2);
        }
    }

    @Test
    void powerOfTwoScalesRoundUpExactly() {
        assertEquals(1f, Fp8BlockQuantizer.roundUpToPowerOfTwo(1f));
        assertEquals(2f, Fp8BlockQuantizer.roundUpToPowerOfTwo(Math.nextUp(1f)));
        assertEquals(2f, Fp8BlockQuantizer.roundUpToPowerOfTwo(1.5f));
        assertEquals(4f, Fp8BlockQuantizer.roundUpToPowerOfTwo(3f));
        assertEquals(0x1p-22f, Fp8BlockQuantizer.roundUpToPowerOfTwo(Fp8BlockQuantizer.AMAX_FLOOR / 448f));
        assertEquals(Float.POSITIVE_INFINITY, Fp8BlockQuantizer.roundUpToPowerOfTwo(Float.POSITIVE_INFINITY));
        Random rnd = new Random(2);
        for (int i = 0; i < 100000; i++) {
            float s = Float.intBitsToFloat(0x00800000 + rnd.nextInt(0x7e000000));
            float p = Fp8BlockQuantizer.roundUpToPowerOfTwo(s);
            assertEquals(0, Float.floatToRawIntBits(p) & 0x7fffff, "a power of two");
            assertTrue(p >= s && p / 2 < s, s + " -> " + p);
        }
        short[] x = block(448f * 3f);
        assertEquals(4f, Fp8BlockQuantizer.scale(x, 0, true), "3 rounded up to 4");
        assertThrows(IllegalArgumentException.class, () -> Fp8BlockQuantizer.roundUpToPowerOfTwo(Float.MIN_VALUE));
    }

    @Test
    void dequantizedValuesAreWithinHalfAStep() {
        Random rnd = new Random(3);
        short[] x = MoeRouting.wideRangeRows(8, 1024, rnd);
        byte[] q = new byte[x.length];
        float[] scales = new float[x.length / 128];
        for (boolean pow2 : new boolean[] {false, true}) {
            Fp8BlockQuantizer.quantizeRow(x, 0, x.length, pow2, q, 0, scales, 0);
            for (int i = 0; i < x.length; i++) {
                double v = Bf16.toFloat(x[i]);
                double s = scales[i / 128];
                double r = Fp8E4m3.toFloat(q[i]) * s;
                // e4m3 has 3 mantissa bits: relative error 2^-4 for normals, an absolute 2^-10 x scale below 2^-6.
                double bound = Math.max(Math.abs(v) * 0x1p-4, 0x1p-10 * s) * (1 + 1e-6);
                assertTrue(Math.abs(r - v) <= bound, "x[" + i + "] = " + v + " -> " + r + " (scale " + s + ")");
            }
        }
        assertThrows(IllegalArgumentException.class,
                () -> Fp8BlockQuantizer.quantizeRow(x, 0, 100, false, q, 0, scales, 0));
    }
}
