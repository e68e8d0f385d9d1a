package io.gda4j.samples.moe;

import io.gda4j.cuda.ModuleImage;
import io.gda4j.moe.check.MoeRouting;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.charset.StandardCharsets;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The framework column moves a row per (token, slot) naming an expert of the receiver, sized from the all-gathered
 * counts as Megatron's dispatcher sizes it; its kernels are on the class path.
 */
class MoeFrameworkNcclBaselineTest {
    @ParameterizedTest
    @EnumSource(MoeRouting.Kind.class)
    void theExchangeIsOneRowPerTokenAndExpertFromTheGatheredCounts(MoeRouting.Kind kind) {
        int n = 4, experts = 16, topK = 3, local = experts / n;
        Random rnd = new Random(kind.ordinal());
        int[] tokens = MoeRouting.tokenCounts(n, 40, rnd);
        int[][] topk = new int[n][];
        int[][] gathered = new int[n][];
        for (int r = 0; r < n; r++) {
            topk[r] = MoeRouting.topk(kind, tokens[r], topK, experts, n, rnd);
            gathered[r] = MoeFrameworkNcclBaseline.countsPerExpert(topk[r], experts);
        }
        long[][] rows = MoeFrameworkNcclBaseline.rowsFromCounts(gathered, local);
        for (int s = 0; s < n; s++) {
            long[] want = new long[n];
            for (int e : topk[s]) {
                if (e >= 0) {
                    want[e / local]++;
                }
            }
            assertArrayEquals(want, rows[s], kind + ": rank " + s + "'s rows per destination, one per (token, slot)");
        }
        // ... which is at least the rows gda4j sends (once per (token, rank)) and at most topK times them
        long[][] once = MoeNcclBaseline.dispatchRows(topk, tokens, topK, experts, n);
        for (int s = 0; s < n; s++) {
            for (int d = 0; d < n; d++) {
                assertTrue(rows[s][d] >= once[s][d] && rows[s][d] <= (long) topK * once[s][d], kind + " " + s + "->" + d);
            }
        }
    }

    @Test
    void theKernelsAreOnTheClassPath() {
        ModuleImage image = ModuleImage.classPathResource(MoeFrameworkNcclBaseline.RESOURCE,
                MoeFrameworkNcclBaseline.class.getClassLoader());
        String ptx = new String(image.bytes(), StandardCharsets.US_ASCII);
        for (String k : new String[] {"fw_zero", "fw_count", "fw_map", "fw_gather", "fw_sort_chunks", "fw_unpermute"}) {
            assertTrue(ptx.contains(".entry " + k + "("), k);
        }
        assertEquals("moe_framework", image.name());
    }
}
