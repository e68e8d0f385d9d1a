package io.gda4j.moe.check;

import io.gda4j.moe.MoeConfig;
import io.gda4j.moe.ll.LowLatencyPart;
import io.gda4j.moe.ll.LowLatencySizing;
import io.gda4j.moe.tensor.Bf16;
import io.gda4j.moe.tensor.ElementType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** MoeLowLatencyReference against first principles: every routing case, BF16/FP8/UE8M0, 1, 2 and 4 ranks. */
class MoeLowLatencyReferenceTest {
    @Test
    void routeNumbersEachExpertsRowsInTokenOrderAndRepeatsAddNone() {
        int[] topk = {1, 5, -1,
                      5, 5, 2,
                      -1, -1, -1,
                      1, 2, 5};
        MoeLowLatencyReference.Route r = MoeLowLatencyReference.route(topk, 4, 3, 8, 4);
        assertArrayEquals(new int[] {0, 0, -1, 1, -1, 0, -1, -1, -1, 1, 1, 2}, r.slot());
        assertArrayEquals(new int[] {0, 1, -1, 0, 0, 2, -1, -1, -1, 0, 1, 2}, r.firstK());
        assertArrayEquals(new int[] {0, 2, 2, 0, 0, 3, 0, 0}, r.sendCount());
    }

    @Test
    void badInputIsRefusedWithWhatToDo() {
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> MoeLowLatencyReference.route(new int[] {0, 1, 2, 8}, 2, 2, 8, 4));
        assertTrue(bad.getMessage().contains("topkIdx[1][1] = 8"), bad.getMessage());
        assertThrows(IllegalArgumentException.class, () -> MoeLowLatencyReference.route(new int[] {-2, 0}, 1, 2, 8, 4));
        IllegalArgumentException many = assertThrows(IllegalArgumentException.class,
                () -> MoeLowLatencyReference.route(new int[10], 5, 2, 8, 4));
        assertTrue(many.getMessage().contains("maxTokensPerRank = 4"), many.getMessage());
    }

    static Stream<Arguments> cases() {
        List<Arguments> a = new ArrayList<>();
        int i = 0;
        for (MoeRouting.Kind kind : MoeRouting.Kind.values()) {
            for (int ranks : new int[] {1, 2, 4}) {
                ElementType t = i % 3 == 0 ? ElementType.BF16 : ElementType.FP8_E4M3;
                a.add(Arguments.of(kind, ranks, t, i % 3 == 2, 1 + i % 8));
                i++;
            }
        }
        return a.stream();
    }

    @ParameterizedTest(name = "{0} {1} ranks {2} pow2 {3} top-{4}")
    @MethodSource("cases")
    void dispatchAndCombineAgreeWithFirstPrinciples(MoeRouting.Kind kind, int ranks, ElementType type,
                                                     boolean pow2, int topK) {
        MoeConfig c = MoeConfig.lowLatencyBuilder().hidden(256).lowLatency(24, type).numExperts(8).topK(topK)
                .powerOfTwoScales(pow2).build();
        LowLatencySizing s = c.lowLatencySizing(ranks);
        Random rnd = new Random(kind.ordinal() * 1000L + ranks * 10L + topK);
        MoeLowLatencyReference.Input[] in = new MoeLowLatencyReference.Input[ranks];
        for (int r = 0; r < ranks; r++) {
            int most = c.lowLatencyMaxTokensPerRank();
            int tokens = r == 1 ? 0 : r == ranks - 1 ? most : 1 + rnd.nextInt(most);
            int[] topk = MoeRouting.topk(kind, tokens, topK, c.numExperts(), ranks, rnd);
            in[r] = new MoeLowLatencyReference.Input(tokens, MoeRouting.wideRangeRows(tokens, c.hidden(), rnd), topk);
        }
        MoeLowLatencyReference.Received[] recv = new MoeLowLatencyReference.Received[ranks];
        short[][] y = new short[ranks][];
        for (int r = 0; r < ranks; r++) {
            recv[r] = MoeLowLatencyReference.dispatch(s, in, r);
            checkReceived(s, in, recv[r], r);
            y[r] = MoeRouting.bf16Rows(s.numLocalExperts() * s.slotsPerExpert(), c.hidden(), rnd);
        }
        for (int src = 0; src < ranks; src++) {
            float[] w = MoeRouting.weights(in[src].topkIdx(), rnd);
            short[] out = MoeLowLatencyReference.combine(s, src, in[src].topkIdx(), w, in[src].numTokens(), y);
            checkCombined(s, recv, y, in[src], w, src, out);
        }
    }

    /** Rows a source sends to experts below {@code expert}: its tokens' distinct experts under it, counted. */
    private static int rowsBelow(MoeLowLatencyReference.Input in, int k, int expert) {
        int rows = 0;
        for (int t = 0; t < in.numTokens(); t++) {
            java.util.Set<Integer> seen = new java.util.HashSet<>();
            for (int j = 0; j < k; j++) {
                int e = in.topkIdx()[t * k + j];
                if (e >= 0 && e < expert && seen.add(e)) {
                    rows++;
                }
            }
        }
        return rows;
    }

    /**
     * Every (source, token, distinct local expert) exactly once, at its slot, with its source's cast bytes and its
     * place in the source's send order (counted here from scratch).
     */
    private static void checkReceived(LowLatencySizing s, MoeLowLatencyReference.Input[] in,
                                      MoeLowLatencyReference.Received got, int rank) {
        LowLatencyPart c = s.config();
        int n = s.worldSize(), local = s.numLocalExperts(), k = c.topK(), maxT = c.maxTokensPerRank();
        int p = s.payloadBytes(), g = s.scalesPerRow();
        int total = 0;
        for (int e = 0; e < local; e++) {
            int expert = rank * local + e;
            for (int src = 0; src < n; src++) {
                MoeLowLatencyReference.Cast cast = MoeLowLatencyReference.cast(c, in[src].x(), in[src].numTokens());
                int below = rowsBelow(in[src], k, expert);
                int next = 0;
                for (int t = 0; t < in[src].numTokens(); t++) {
                    int first = -1;
                    for (int j = 0; j < k && first < 0; j++) {
                        if (in[src].topkIdx()[t * k + j] == expert) {
                            first = j;
                        }
                    }
                    if (first < 0) {
                        continue;
                    }
                    int row = e * s.slotsPerExpert() + src * maxT + next;
                    assertTrue(got.valid(e, src * maxT + next));
                    assertArrayEquals(new int[] {src, t, first, below + next}, java.util.Arrays.copyOfRange(got.src(),
                            4 * row, 4 * row + 4), "source record of expert " + expert + " row " + next + " from " + src);
                    for (int b = 0; b < p; b++) {
                        assertEquals(cast.x()[t * p + b], got.x()[row * p + b]);
                    }
                    for (int j = 0; j < g; j++) {
                        assertEquals(cast.scales()[t * g + j], got.scales()[row * g + j]);
                    }
                    next++;
                }
                assertEquals(next, got.countPerSource()[e * n + src]);
                assertTrue(next == maxT || !got.valid(e, src * maxT + next), "the slot after the last is a hole");
                total += next;
            }
        }
        int sum = 0;
        for (int v : got.count()) {
            sum += v;
        }
        assertEquals(total, sum);
    }

    /** The weighted sum recomputed by finding each (token, expert) row through the receivers' source records. */
    private static void checkCombined(LowLatencySizing s, MoeLowLatencyReference.Received[] recv, short[][] y,
                                      MoeLowLatencyReference.Input in, float[] w, int src, short[] out) {
        int hidden = s.config().hidden(), k = s.config().topK(), local = s.numLocalExperts();
        Map<Long, Integer> rowOf = new HashMap<>();   // (token, global expert) -> row at the expert's rank
        for (int r = 0; r < recv.length; r++) {
            for (int row = 0; row < local * s.slotsPerExpert(); row++) {
                int e = row / s.slotsPerExpert();
                if (recv[r].valid(e, row % s.slotsPerExpert()) && recv[r].src()[4 * row] == src) {
                    rowOf.put((long) recv[r].src()[4 * row + 1] << 32 | (r * local + e), row);
                }
            }
        }
        for (int t = 0; t < in.numTokens(); t++) {
            boolean any = false;
            for (int h = 0; h < hidden; h++) {
                float acc = 0f;
                for (int j = 0; j < k; j++) {
                    int e = in.topkIdx()[t * k + j];
                    if (e < 0) {
                        continue;
                    }
                    any = true;
                    int row = rowOf.get((long) t << 32 | e);
                    acc = Math.fma(w[t * k + j], Bf16.toFloat(y[e / local][row * hidden + h]), acc);
                }
                assertEquals(Bf16.fromFloat(acc), out[t * hidden + h], "token " + t + " channel " + h);
            }
            if (!any) {
                for (int h = 0; h < hidden; h++) {
                    assertEquals((short) 0, out[t * hidden + h], "a token routed nowhere combines to +0");
                }
            }
        }
    }

    @Test
    void combineOfOneExpertWithWeightOneIsItsRowBitForBit() {
        MoeConfig c = MoeConfig.lowLatencyBuilder().hidden(128).numExperts(4).topK(2).lowLatency(4, ElementType.BF16)
                .build();
        LowLatencySizing s = c.lowLatencySizing(2);
        int[] topk = {3, -1, -1, -1};
        short[][] y = {new short[2 * 8 * 128], MoeRouting.bf16Rows(2 * 8, 128, new Random(5))};
        short[] out = MoeLowLatencyReference.combine(s, 0, topk, new float[] {1f, 0.5f, 0f, 0f}, 2, y);
        int row = 1 * s.slotsPerExpert();   // expert 3 = rank 1's local 1, source 0, slot 0
        for (int h = 0; h < 128; h++) {
            assertEquals(y[1][row * 128 + h], out[h]);
            assertEquals((short) 0, out[128 + h]);
        }
    }
}
