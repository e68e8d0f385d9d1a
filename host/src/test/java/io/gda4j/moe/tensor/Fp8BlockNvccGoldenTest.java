package io.gda4j.moe.tensor;

import io.gda4j.mlx5.GccProgram;
import io.gda4j.mlx5.RequiresCompilers;
import io.gda4j.moe.check.MoeRouting;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The kernel's own cast ({@code gda4j/moe/fp8_block.cuh}, built for the host by nvcc through
 * {@code host/src/test/c/fp8_block_golden.cu}) against Fp8BlockQuantizer: scale bits and every code of a few thousand
 * blocks (MoeRouting's wide-range rows, NaN and infinity blocks), with and without power-of-two scales.
 * Skipped where nvcc is missing.
 */
@RequiresCompilers(tools = "nvcc", promised = false)
class Fp8BlockNvccGoldenTest {
    @Test
    void theKernelsCastMatchesJavaBitForBit(@TempDir Path dir) throws Exception {
        Path include = GccProgram.deviceInclude("gda4j/moe/fp8_block.cuh");
        Path exe = dir.resolve("fp8_block_golden");
        Process nvcc = new ProcessBuilder("nvcc", "-std=c++17", "-I", include.toString(),
                GccProgram.source("fp8_block_golden.cu").toString(), "-o", exe.toString()).redirectErrorStream(true).start();
        String log = new String(nvcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(nvcc.waitFor(120, TimeUnit.SECONDS), "nvcc did not finish in 120 s");
        assertEquals(0, nvcc.exitValue(), "nvcc failed on fp8_block_golden.cu:\n" + log);

        int blocks = 3000;
        short[] x = MoeRouting.wideRangeRows(blocks / 30, 30 * 128, new Random(11));
        x[5] = Bf16.fromFloat(Float.NaN);
        x[128 + 9] = Bf16.fromFloat(Float.POSITIVE_INFINITY);
        x[256 + 1] = Bf16.fromFloat(Float.NEGATIVE_INFINITY);
        StringBuilder in = new StringBuilder();
        for (int b = 0; b < blocks; b++) {
            in.append(b % 2);
            for (int i = 0; i < 128; i++) {
                in.append(' ').append(Integer.toHexString(x[b * 128 + i] & 0xffff));
            }
            in.append('\n');
        }
        String[] out = GccProgram.run(exe, in.toString()).strip().split("\n");
        assertEquals(blocks, out.length);
        for (int b = 0; b < blocks; b++) {
            String[] f = out[b].split(" ");
            float scale = Fp8BlockQuantizer.scale(x, b * 128, b % 2 == 1);
            assertEquals(Integer.toHexString(Float.floatToRawIntBits(scale)), Integer.toHexString(
                    Integer.parseUnsignedInt(f[0], 16)), "scale of block " + b);
            for (int i = 0; i < 128; i++) {
                assertEquals(Integer.parseInt(f[1 + i], 16), Fp8BlockQuantizer.quantize(x[b * 128 + i], scale) & 0xff,
                        "block " + b + " element " + i);
            }
        }
    }
}
