package io.gda4j.moe.tensor;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class Bf16Test {
    @Test
    void roundsToNearestEven() {
        assertEquals((short) 0x3f80, Bf16.fromFloat(1.0f));
        // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties go to the even mantissa (1.0).
        assertEquals((short) 0x3f80, Bf16.fromFloat(Float.intBitsToFloat(0x3f808000)));
        // 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 (odd) and 1 + 2^-6: up.
        assertEquals((short) 0x3f82, Bf16.fromFloat(Float.intBitsToFloat(0x3f818000)));
        assertEquals((short) 0x3f81, Bf16.fromFloat(Float.intBitsToFloat(0x3f808001)));
        assertEquals((short) 0x7f80, Bf16.fromFloat(Float.POSITIVE_INFINITY));
        assertEquals((short) 0x7fff, Bf16.fromFloat(Float.NaN));
        assertEquals((short) 0x8000, Bf16.fromFloat(-0.0f));
        assertEquals((short) 0x7f80, Bf16.fromFloat(Float.MAX_VALUE), "rounds up to infinity like cvt.rn");
    }

    @Test
    void widensExactly() {
        for (int bits = 0; bits < 0x10000; bits += 7) {
            float f = Bf16.toFloat((short) bits);
            if (!Float.isNaN(f)) {
                assertEquals((short) bits, Bf16.fromFloat(f));
            }
        }
    }
}
