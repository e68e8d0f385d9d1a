package io.gda4j.moe.check;

import io.gda4j.moe.MoeConfig;
import io.gda4j.moe.ht.HighThroughputPart;
import io.gda4j.moe.ht.HighThroughputSizing;
import io.gda4j.moe.ht.MoeChannels;
import io.gda4j.moe.tensor.Bf16;
import io.gda4j.moe.tensor.ElementType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The reference against first principles: routing cases x top-k 1..8 x 2 and 4 ranks. */
class MoeReferenceTest {
    static Stream<Arguments> cases() {
        return MoeRouting.HIGH_THROUGHPUT.stream().flatMap(kind -> IntStream.rangeClosed(1, 8)
                .boxed().flatMap(k -> Stream.of(2, 4).map(n -> Arguments.of(kind, k, n))));
    }

    private static HighThroughputSizing sizing(int topK, int ranks, ElementType dtype) {
        return MoeConfig.builder().hidden(256).dtype(dtype).maxTokensPerRank(40).numExperts(16).topK(topK)
                .numChannels(3).chunkTokens(4).ringTokens(8).combineWarps(4).build().sizing(ranks);
    }

    @ParameterizedTest(name = "{0} top-{1} {2} ranks")
    @MethodSource("cases")
    void layoutDispatchAndCombineAgreeWithFirstPrinciples(MoeRouting.Kind kind, int topK, int ranks) {
        HighThroughputSizing s = sizing(topK, ranks, topK % 2 == 0 ? ElementType.BF16 : ElementType.FP8_E4M3);
        HighThroughputPart c = s.config();
        Random rnd = new Random(kind.ordinal() * 100 + topK * 10 + ranks);
        MoeReference.Input[] in = new MoeReference.Input[ranks];
        MoeReference.Layout[] layouts = new MoeReference.Layout[ranks];
        for (int r = 0; r < ranks; r++) {
            // rank 1 sends nothing; the last rank sends exactly the maximum
            int tokens = r == 1 ? 0 : r == ranks - 1 ? c.maxTokensPerRank() : 1 + rnd.nextInt(c.maxTokensPerRank());
            int[] topk = MoeRouting.topk(kind, tokens, topK, c.numExperts(), ranks, rnd);
            in[r] = MoeRouting.input(s, r, tokens, topk, rnd);
            layouts[r] = MoeReference.layout(topk, tokens, topK, c.numExperts(), ranks, c.numChannels());
            checkLayout(layouts[r], topk, topK, s);
        }
        MoeReference.Received[] recv = new MoeReference.Received[ranks];
        short[][] y = new short[ranks][];
        for (int r = 0; r < ranks; r++) {
            recv[r] = MoeReference.dispatch(s, in, r);
            int expected = 0;
            for (int src = 0; src < ranks; src++) {
                expected += layouts[src].tokensPerRank()[r];
            }
            assertEquals(expected, recv[r].count(), "rank " + r + " receives each token once");
            checkReceived(s, in, recv[r], r);
            y[r] = MoeRouting.bf16Rows(recv[r].count(), c.hidden(), rnd);
        }
        for (int src = 0; src < ranks; src++) {
            short[] out = MoeReference.combine(c.hidden(), recv, y, src, in[src].numTokens());
            for (int t = 0; t < in[src].numTokens(); t++) {
                for (int h = 0; h < c.hidden(); h += 37) {
                    float acc = 0f;
                    for (int r = 0; r < ranks; r++) {
                        for (int i = 0; i < recv[r].count(); i++) {
                            if (recv[r].srcRank()[i] == src && recv[r].srcToken()[i] == t) {
                                acc += Bf16.toFloat(y[r][i * c.hidden() + h]);
                            }
                        }
                    }
                    assertEquals(Bf16.fromFloat(acc), out[t * c.hidden() + h], "rank " + src + " token " + t + " channel " + h);
                }
            }
        }
    }

    private static void checkLayout(MoeReference.Layout l, int[] topk, int k, HighThroughputSizing s) {
        int n = s.worldSize();
        int local = s.numLocalExperts();
        int[] next = new int[s.config().numChannels() * n];
        int[] perExpert = new int[s.config().numExperts()];
        for (int t = 0; t < l.numTokens(); t++) {
            int c = MoeChannels.of(l.numTokens(), s.config().numChannels(), t);
            for (int r = 0; r < n; r++) {
                boolean in = false;
                for (int j = 0; j < k; j++) {
                    int e = topk[t * k + j];
                    in |= e >= 0 && e / local == r;
                }
                assertEquals(in, l.inRank(t, r));
                if (in) {
                    assertEquals(next[c * n + r]++, l.slot(t, r), "slots count the channel's earlier tokens in the rank");
                }
            }
            for (int j = 0; j < k; j++) {
                if (topk[t * k + j] >= 0) {
                    perExpert[topk[t * k + j]]++;
                }
            }
        }
        assertArrayEquals(next, l.channelCount());
        assertArrayEquals(perExpert, l.tokensPerExpert());
        for (int r = 0; r < n; r++) {
            int sum = 0;
            for (int c = 0; c < s.config().numChannels(); c++) {
                sum += l.channelCount(c, r);
            }
            assertEquals(sum, l.tokensPerRank()[r]);
        }
    }

    private static void checkReceived(HighThroughputSizing s, MoeReference.Input[] in, MoeReference.Received got,
            int rank) {
        int k = s.config().topK();
        int local = s.numLocalExperts();
        ByteBuffer x = ByteBuffer.wrap(got.x()).order(ByteOrder.LITTLE_ENDIAN);
        int[] counts = new int[local];
        for (int i = 0; i < got.count(); i++) {
            int src = got.srcRank()[i];
            int t = got.srcToken()[i];
            if (i > 0) {
                long prev = (long) got.srcRank()[i - 1] << 32 | got.srcToken()[i - 1];
                assertTrue(prev < ((long) src << 32 | t), "rows sorted by (source rank, token)");
            }
            assertEquals(src, x.getInt(i * s.payloadBytes()), "the payload names its source rank");
            assertEquals(t, x.getInt(i * s.payloadBytes() + 4), "the payload names its token");
            boolean any = false;
            for (int j = 0; j < k; j++) {
                int e = in[src].topkIdx()[t * k + j];
                int li = got.topkIdx()[i * k + j];
                if (e >= 0 && e / local == rank) {
                    assertEquals(e - rank * local, li);
                    assertEquals(in[src].topkWeights()[t * k + j], got.topkWeights()[i * k + j]);
                    counts[li]++;
                    any = true;
                } else {
                    assertEquals(-1, li);
                    assertEquals(0f, got.topkWeights()[i * k + j]);
                }
            }
            assertTrue(any, "only tokens with an expert here arrive");
            for (int j = 0; j < s.scalesPerRow(); j++) {
                assertEquals(in[src].scales()[t * s.scalesPerRow() + j], got.scales()[i * s.scalesPerRow() + j]);
            }
        }
        assertArrayEquals(counts, got.localExpertCounts());
    }

    @Test
    void aTokenWithTwoExpertsOnOneRankGoesThereOnce() {
        HighThroughputSizing s = sizing(2, 2, ElementType.BF16);
        int[] topk = {0, 1, 0, 12};   // token 0: experts 0 and 1, both on rank 0; token 1: ranks 0 and 1
        MoeReference.Layout l = MoeReference.layout(topk, 2, 2, 16, 2, 3);
        assertArrayEquals(new int[] {2, 1}, l.tokensPerRank());
        MoeReference.Input in = MoeRouting.input(s, 0, 2, topk, new Random(1));
        MoeReference.Input none = MoeRouting.input(s, 1, 0, new int[0], new Random(2));
        MoeReference.Received r0 = MoeReference.dispatch(s, new MoeReference.Input[] {in, none}, 0);
        assertEquals(2, r0.count());
        assertArrayEquals(new int[] {0, 1, 0, -1}, r0.topkIdx());
        assertArrayEquals(new int[] {2, 1, 0, 0, 0, 0, 0, 0}, r0.localExpertCounts());
    }

    @Test
    void combineSumsInIncreasingRankOrderInFp32() {
        // 2^24 + 1 rounds back to 2^24 in FP32, then - 2^24 gives 0; the order 0, 2, 1 would give 1.
        HighThroughputSizing s = MoeConfig.builder().hidden(128).maxTokensPerRank(1).numExperts(3).topK(3)
                .numChannels(1)
                .chunkTokens(1).ringTokens(1).combineWarps(1).build().sizing(3);
        int[] topk = {0, 1, 2};
        MoeReference.Input[] in = {MoeRouting.input(s, 0, 1, topk, new Random(3)),
                MoeRouting.input(s, 1, 0, new int[0], new Random(4)), MoeRouting.input(s, 2, 0, new int[0], new Random(5))};
        MoeReference.Received[] recv = new MoeReference.Received[3];
        short[][] y = new short[3][128];
        float[] v = {16777216f, 1f, -16777216f};
        for (int r = 0; r < 3; r++) {
            recv[r] = MoeReference.dispatch(s, in, r);
            assertEquals(1, recv[r].count());
            java.util.Arrays.fill(y[r], Bf16.fromFloat(v[r]));
        }
        short[] out = MoeReference.combine(128, recv, y, 0, 1);
        assertEquals(0f, Bf16.toFloat(out[0]));
    }

    @Test
    void anExpertOutOfRangeIsRefusedNamingTheEntry() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MoeReference.layout(new int[] {0, 1, 16, -1}, 2, 2, 16, 2, 1));
        assertTrue(e.getMessage().contains("topkIdx[1][0] = 16"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> MoeReference.layout(new int[] {-2}, 1, 1, 16, 2, 1));
    }
}
