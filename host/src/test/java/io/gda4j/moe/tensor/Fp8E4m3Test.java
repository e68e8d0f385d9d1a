package io.gda4j.moe.tensor;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Fp8E4m3 against the e4m3fn definition: every code, every tie between neighbours, saturation, subnormals and signed
 * zeros, and about a million FP32 bit patterns against a brute-force nearest-value search (an oracle that shares no
 * code with the encoder).
 */
class Fp8E4m3Test {
    @Test
    void everyCodeDecodesAndReencodesToItself() {
        for (int c = 0; c < 256; c++) {
            float v = Fp8E4m3.toFloat((byte) c);
            if ((c & 0x7f) == 0x7f) {
                assertTrue(Float.isNaN(v), "code " + c + " is NaN");
                assertEquals(Fp8E4m3.NAN, Fp8E4m3.fromFloat(v), "NaN, either sign, encodes as 0x7f");
            } else {
                assertEquals((byte) c, Fp8E4m3.fromFloat(v), "code 0x" + Integer.toHexString(c));
            }
        }
    }

    @Test
    void knownValues() {
        assertEquals(448.0f, Fp8E4m3.toFloat((byte) 0x7e));
        assertEquals(-448.0f, Fp8E4m3.toFloat((byte) 0xfe));
        assertEquals(1.0f, Fp8E4m3.toFloat((byte) 0x38));
        assertEquals(0x1p-9f, Fp8E4m3.toFloat((byte) 0x01), "smallest subnormal");
        assertEquals(7 * 0x1p-9f, Fp8E4m3.toFloat((byte) 0x07), "largest subnormal");
        assertEquals(0x1p-6f, Fp8E4m3.toFloat((byte) 0x08), "smallest normal");
        assertEquals(Float.floatToRawIntBits(-0.0f), Float.floatToRawIntBits(Fp8E4m3.toFloat((byte) 0x80)));
        for (int c = 1; c < 0x7f; c++) {
            assertTrue(Fp8E4m3.toFloat((byte) c) > Fp8E4m3.toFloat((byte) (c - 1)), "increasing at " + c);
        }
    }

    @Test
    void tiesBetweenNeighboursRoundToTheEvenCode() {
        for (int c = 0; c < 0x7e; c++) {
            for (int sign : new int[] {0, 0x80}) {
                float lo = Fp8E4m3.toFloat((byte) (sign | c));
                float hi = Fp8E4m3.toFloat((byte) (sign | (c + 1)));
                float mid = (lo + hi) / 2;   // exact: FP32 has 20 more mantissa bits
                assertEquals((double) lo + hi, 2.0 * mid, "midpoint exact");
                int even = (c & 1) == 0 ? c : c + 1;
                assertEquals((byte) (sign | even), Fp8E4m3.fromFloat(mid), "tie between 0x" + Integer.toHexString(c)
                        + " and its successor, sign " + sign);
                float towardHi = sign == 0 ? Math.nextUp(mid) : Math.nextDown(mid);
                float towardLo = sign == 0 ? Math.nextDown(mid) : Math.nextUp(mid);
                assertEquals((byte) (sign | (c + 1)), Fp8E4m3.fromFloat(towardHi));
                assertEquals((byte) (sign | c), Fp8E4m3.fromFloat(towardLo));
            }
        }
    }

    @Test
    void beyond448Saturates() {
        for (float f : new float[] {448f, Math.nextUp(448f), 463.99f, 464f, 480f, 1e6f, Float.MAX_VALUE,
                Float.POSITIVE_INFINITY}) {
            assertEquals((byte) 0x7e, Fp8E4m3.fromFloat(f), Float.toString(f));
            assertEquals((byte) 0xfe, Fp8E4m3.fromFloat(-f), Float.toString(-f));
        }
        assertEquals((byte) 0x7d, Fp8E4m3.fromFloat(Math.nextDown(432f)), "just below the 416/448 tie: 416");
        assertEquals((byte) 0x7e, Fp8E4m3.fromFloat(432f), "the 416/448 tie goes to the even code, 448 (0x7e)");
    }

    @Test
    void tinyValuesGoToTheRightSubnormalOrAZeroWithTheirSign() {
        assertEquals((byte) 0x00, Fp8E4m3.fromFloat(0x1p-10f), "half the smallest subnormal ties to zero (even)");
        assertEquals((byte) 0x80, Fp8E4m3.fromFloat(-0x1p-10f));
        assertEquals((byte) 0x01, Fp8E4m3.fromFloat(Math.nextUp(0x1p-10f)));
        assertEquals((byte) 0x81, Fp8E4m3.fromFloat(-Math.nextUp(0x1p-10f)));
        assertEquals((byte) 0x00, Fp8E4m3.fromFloat(Float.MIN_VALUE), "an FP32 subnormal");
        assertEquals((byte) 0x80, Fp8E4m3.fromFloat(-Float.MIN_VALUE));
        assertEquals((byte) 0x00, Fp8E4m3.fromFloat(0.0f));
        assertEquals((byte) 0x80, Fp8E4m3.fromFloat(-0.0f));
        assertEquals((byte) 0x02, Fp8E4m3.fromFloat(3 * 0x1p-10f), "1.5 steps ties to 2");
        assertEquals((byte) 0x08, Fp8E4m3.fromFloat(Math.nextDown(0x1p-6f)), "just below the smallest normal");
        assertEquals((byte) 0x08, Fp8E4m3.fromFloat(15 * 0x1p-10f), "7.5 steps ties to 8: the smallest normal");
    }

    @Test
    void aMillionBitPatternsMatchTheNearestValue() {
        float[] values = new float[0x7f];
        for (int c = 0; c < values.length; c++) {
            values[c] = Fp8E4m3.toFloat((byte) c);
        }
        long checked = 0;
        for (long bits = 0; bits <= 0xffffffffL; bits += 4099) {
            float f = Float.intBitsToFloat((int) bits);
            byte want = nearest(f, values);
            if (want != Fp8E4m3.fromFloat(f)) {
                assertEquals(want, Fp8E4m3.fromFloat(f), "0x" + Long.toHexString(bits));
            }
            checked++;
        }
        assertTrue(checked > 1_000_000);
    }

    /** The oracle: the code of the nearest value (ties: the even code), saturating, NaN to 0x7f. */
    private static byte nearest(float f, float[] values) {
        if (Float.isNaN(f)) {
            return 0x7f;
        }
        int sign = Float.floatToRawIntBits(f) < 0 ? 0x80 : 0;
        double a = Math.abs((double) f);
        if (a >= 448) {
            return (byte) (sign | 0x7e);
        }
        int best = 0;
        for (int c = 1; c < values.length; c++) {
            double d = Math.abs(values[c] - a);
            double bd = Math.abs(values[best] - a);
            if (d < bd || (d == bd && (c & 1) == 0)) {
                best = c;
            }
        }
        return (byte) (sign | best);
    }
}
