package io.gda4j.samples.moe;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** How a process world's MoE timings combine: per iteration the slowest process's figure. */
class GatedStepsTest {
    private static byte[] doubles(double... v) {
        ByteBuffer b = ByteBuffer.allocate(8 * v.length).order(ByteOrder.LITTLE_ENDIAN);
        for (double d : v) {
            b.putDouble(d);
        }
        return b.array();
    }

    @Test
    void eachIterationTakesTheSlowestProcess() {
        double[] mine = {1.0, 5.0, 2.0};
        // The gather includes this process's own figures, as the bootstrap's all-gather does.
        double[] got = GatedSteps.slowest(mine, new byte[][] {doubles(1.0, 5.0, 2.0), doubles(3.0, 4.0, 2.5),
                doubles(0.5, 6.0, 1.0)});
        assertArrayEquals(new double[] {3.0, 6.0, 2.5}, got);
        assertArrayEquals(new double[] {1.0, 5.0, 2.0}, mine, "the caller's array is left as it was");
    }

    @Test
    void aProcessThatTimedOtherIterationsIsNamedNotMixedIn() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> GatedSteps.slowest(new double[] {1.0, 2.0}, new byte[][] {doubles(1.0, 2.0), doubles(1.0)}));
        assertTrue(e.getMessage().contains("sent 1 timings, this one has 2"), e.getMessage());
    }
}
