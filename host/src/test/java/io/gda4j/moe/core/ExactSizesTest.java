package io.gda4j.moe.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The sizings' exact arithmetic: results, and refusals that name the config and the quantity. */
class ExactSizesTest {
    private final ExactSizes x = new ExactSizes("MoeConfig");

    @Test
    void sectionsAreAlignedAndSizesExact() {
        assertEquals(256, x.next(0, "a", 1));
        assertEquals(512, x.next(256, "a", 256));
        assertEquals(256, x.next(256, "an empty section", 0));
        assertEquals(48, ExactSizes.align(33, 16));
        assertEquals(6L << 40, x.mul("m", 3L << 20, 2L << 20));
        assertEquals(Integer.MAX_VALUE, x.toInt("t", Integer.MAX_VALUE));
    }

    @Test
    void overflowsAreRefusedNamingTheConfigAndTheQuantity() {
        assertEquals("MoeConfig too large: ring rows = " + Long.MAX_VALUE + " x 2 overflows 64 bits",
                assertThrows(IllegalArgumentException.class, () -> x.mul("ring rows", Long.MAX_VALUE, 2))
                        .getMessage());
        assertEquals("MoeConfig too large: words = " + Long.MAX_VALUE + " + 1 overflows 64 bits",
                assertThrows(IllegalArgumentException.class, () -> x.add("words", Long.MAX_VALUE, 1)).getMessage());
        assertEquals("MoeConfig too large: slots = 2147483648 exceeds 2147483647, the largest 32-bit index the kernels"
                + " use; lower the sizes that make it up",
                assertThrows(IllegalArgumentException.class, () -> x.toInt("slots", 1L << 31)).getMessage());
        assertEquals("MoeLowLatencyConfig too large: recvX bytes (" + Long.MAX_VALUE + " bytes) overflows 64 bits",
                assertThrows(IllegalArgumentException.class, () -> new ExactSizes("MoeLowLatencyConfig")
                        .next(256, "recvX bytes", Long.MAX_VALUE)).getMessage());
    }
}
