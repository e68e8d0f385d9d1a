package io.gda4j.moe.tensor;

import io.gda4j.mlx5.GccProgram;
import io.gda4j.mlx5.RequiresCompilers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Fp8E4m3 against CUDA's own conversion, {@code __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3)}, built for the
 * host by nvcc from {@code host/src/test/c/fp8_golden.cu}: every code's value, every tie and its two neighbours,
 * saturation, NaN and infinities, signed zeros and subnormals, and a few thousand deterministic random patterns.
 * Skipped where nvcc is missing (it is not a Debian package, so no build promises it).
 */
@RequiresCompilers(tools = "nvcc", promised = false)
class Fp8E4m3NvccGoldenTest {
    @Test
    void javaMatchesCudaBitForBit(@TempDir Path dir) throws Exception {
        Path exe = dir.resolve("fp8_golden");
        Process nvcc = new ProcessBuilder("nvcc", "-std=c++17", GccProgram.source("fp8_golden.cu").toString(), "-o",
                exe.toString()).redirectErrorStream(true).start();
        String log = new String(nvcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(nvcc.waitFor(120, TimeUnit.SECONDS), "nvcc did not finish in 120 s");
        assertEquals(0, nvcc.exitValue(), "nvcc failed on fp8_golden.cu:\n" + log);
        List<Float> values = new ArrayList<>();
        for (int c = 0; c < 256; c++) {
            float v = Fp8E4m3.toFloat((byte) c);
            values.add(v);
            values.add(Math.nextUp(v));
            values.add(Math.nextDown(v));
            if ((c & 0x7f) < 0x7e) {
                float mid = (v + Fp8E4m3.toFloat((byte) (c + 1))) / 2;
                values.add(mid);
                values.add(Math.nextUp(mid));
                values.add(Math.nextDown(mid));
            }
        }
        for (float f : new float[] {0f, -0f, Float.MIN_VALUE, -Float.MIN_VALUE, 0x1p-10f, -0x1p-10f, 464f, -464f, 480f,
                Float.MAX_VALUE, -Float.MAX_VALUE, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN,
                Float.intBitsToFloat(0xffc00000), Float.intBitsToFloat(0x7f800001)}) {
            values.add(f);
        }
        SplittableRandom rnd = new SplittableRandom(20261123);
        for (int i = 0; i < 3000; i++) {
            values.add(Float.intBitsToFloat(rnd.nextInt()));
            values.add((float) rnd.nextDouble(-500, 500));
            values.add((float) rnd.nextDouble(-0.02, 0.02));
        }
        StringBuilder in = new StringBuilder();
        for (float f : values) {
            in.append(Integer.toHexString(Float.floatToRawIntBits(f))).append('\n');
        }
        String[] out = GccProgram.run(exe, in.toString()).strip().split("\n");
        assertEquals(values.size(), out.length, "one code per value");
        for (int i = 0; i < out.length; i++) {
            float f = values.get(i);
            assertEquals(Integer.parseInt(out[i].strip(), 16), Fp8E4m3.fromFloat(f) & 0xff, "fp8 of " + f + " (0x"
                    + Integer.toHexString(Float.floatToRawIntBits(f)) + ")");
        }
    }
}
