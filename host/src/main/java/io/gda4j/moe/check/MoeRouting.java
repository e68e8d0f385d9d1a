package io.gda4j.moe.check;

import io.gda4j.moe.ht.HighThroughputSizing;
import io.gda4j.moe.tensor.Bf16;
import io.gda4j.moe.tensor.Fp8BlockQuantizer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * Routings and inputs for the tests and benchmarks of both modes: the cases the MoE tests name (uniform, one hot
 * expert and one hot rank, -1 entries, all experts of a token on one rank, a rank with no tokens; for the low-latency
 * path also every token on one expert and an expert repeated within a token's top-k), payload rows that carry their
 * source rank and token index in their first 8 bytes, so a misrouted row is caught, and BF16 rows whose 128-channel
 * blocks span very different magnitudes, so every FP8 scale path is taken.
 */
public final class MoeRouting {
    /** The routing cases: the high-throughput tests take {@link #HIGH_THROUGHPUT}, the low-latency ones all. */
    public enum Kind {
        /** k distinct experts drawn uniformly. */
        UNIFORM,
        /** Most tokens pick expert 0 (a hot expert) and the rest pick experts of the last rank (a hot rank). */
        SKEWED,
        /** Like UNIFORM with about a third of the entries -1. */
        WITH_NONE,
        /** Every token's experts all lie on one rank (a different one per token). */
        ONE_RANK_PER_TOKEN,
        /** Every token picks experts of rank 0 only. */
        ALL_TO_RANK_ZERO,
        /** Every token names one expert (the last one) in slot 0, -1 elsewhere: one expert gets every row. */
        ONE_EXPERT,
        /** Uniform, but slot k >= 1 repeats slot k - 1's expert with probability 1/3: repeats add no rows. */
        REPEATS
    }

    /**
     * The cases of the high-throughput tests: its layout takes a token's experts as distinct, so repeats are the
     * low-latency path's alone.
     */
    public static final List<Kind> HIGH_THROUGHPUT = List.of(Kind.UNIFORM, Kind.SKEWED, Kind.WITH_NONE,
            Kind.ONE_RANK_PER_TOKEN, Kind.ALL_TO_RANK_ZERO);

    private MoeRouting() {
    }

    /** Token counts per rank for a case: rank 1 (when there is one) sends nothing, the last rank sends the maximum. */
    public static int[] tokenCounts(int worldSize, int maxTokens, Random rnd) {
        int[] t = new int[worldSize];
        for (int r = 0; r < worldSize; r++) {
            t[r] = r == worldSize - 1 ? maxTokens : r == 1 ? 0 : 1 + rnd.nextInt(maxTokens);
        }
        return t;
    }

    /** {@code numTokens x topK} expert indices of one rank. */
    public static int[] topk(Kind kind, int numTokens, int topK, int numExperts, int worldSize, Random rnd) {
        if (kind == Kind.ONE_EXPERT) {
            int[] idx = new int[numTokens * topK];
            Arrays.fill(idx, -1);
            for (int t = 0; t < numTokens; t++) {
                idx[t * topK] = numExperts - 1;
            }
            return idx;
        }
        if (kind == Kind.REPEATS) {
            int[] idx = topk(Kind.UNIFORM, numTokens, topK, numExperts, worldSize, rnd);
            for (int t = 0; t < numTokens; t++) {
                for (int k = 1; k < topK; k++) {
                    if (rnd.nextInt(3) == 0) {
                        idx[t * topK + k] = idx[t * topK + k - 1];
                    }
                }
            }
            return idx;
        }
        int local = numExperts / worldSize;
        int[] idx = new int[numTokens * topK];
        for (int t = 0; t < numTokens; t++) {
            int[] row = switch (kind) {
                case UNIFORM, WITH_NONE -> distinct(rnd, topK, 0, numExperts);
                case SKEWED -> skewedRow(rnd, topK, numExperts, local, worldSize);
                case ONE_RANK_PER_TOKEN -> distinctOrNone(rnd, topK, rnd.nextInt(worldSize) * local, local);
                case ALL_TO_RANK_ZERO -> distinctOrNone(rnd, topK, 0, local);
                case ONE_EXPERT, REPEATS -> throw new AssertionError(kind);
            };
            if (kind == Kind.WITH_NONE) {
                for (int k = 0; k < topK; k++) {
                    if (rnd.nextInt(3) == 0) {
                        row[k] = -1;
                    }
                }
            }
            System.arraycopy(row, 0, idx, t * topK, topK);
        }
        return idx;
    }

    private static int[] skewedRow(Random rnd, int topK, int numExperts, int local, int worldSize) {
        if (rnd.nextInt(4) != 0) {
            int[] row = distinct(rnd, topK, 0, numExperts);
            row[0] = 0;
            for (int k = 1; k < topK; k++) {
                if (row[k] == 0) {
                    row[k] = -1;
                }
            }
            return row;
        }
        return distinctOrNone(rnd, topK, (worldSize - 1) * local, local);
    }

    /** k distinct values of [from, from + range), or -1 where range is too small. */
    private static int[] distinctOrNone(Random rnd, int k, int from, int range) {
        int[] row = new int[k];
        int[] pool = shuffled(rnd, range);
        for (int i = 0; i < k; i++) {
            row[i] = i < range ? from + pool[i] : -1;
        }
        return row;
    }

    private static int[] distinct(Random rnd, int k, int from, int range) {
        return distinctOrNone(rnd, k, from, range);
    }

    private static int[] shuffled(Random rnd, int n) {
        int[] a = new int[n];
        for (int i = 0; i < n; i++) {
            a[i] = i;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1);
            int tmp = a[i];
            a[i] = a[j];
            a[j] = tmp;
        }
        return a;
    }

    /**
     * An input of {@code numTokens} rows for rank {@code rank}: random payload bytes whose first 8 bytes are
     * (int32 rank, int32 token), random FP8 scales where the config is FP8, weights in [0, 1).
     */
    public static MoeReference.Input input(HighThroughputSizing sizing, int rank, int numTokens, int[] topk, Random rnd) {
        int payload = sizing.payloadBytes();
        byte[] x = new byte[numTokens * payload];
        rnd.nextBytes(x);
        ByteBuffer b = ByteBuffer.wrap(x).order(ByteOrder.LITTLE_ENDIAN);
        for (int t = 0; t < numTokens; t++) {
            b.putInt(t * payload, rank);
            b.putInt(t * payload + 4, t);
        }
        float[] scales = new float[numTokens * sizing.scalesPerRow()];
        for (int i = 0; i < scales.length; i++) {
            scales[i] = rnd.nextFloat() + 0.5f;
        }
        float[] w = new float[topk.length];
        for (int i = 0; i < w.length; i++) {
            w[i] = rnd.nextFloat();
        }
        return new MoeReference.Input(numTokens, x, scales, topk, w);
    }

    /** {@code rows x hidden} finite BF16 values in [-4, 4): what an expert might return, for combine tests. */
    public static short[] bf16Rows(int rows, int hidden, Random rnd) {
        short[] y = new short[rows * hidden];
        for (int i = 0; i < y.length; i++) {
            y[i] = Bf16.fromFloat(rnd.nextFloat() * 8f - 4f);
        }
        return y;
    }

    /**
     * {@code numTokens x hidden} BF16 rows: each 128-channel block draws its magnitude from 2^-30 .. 2^30 (some blocks
     * all zero, some holding a -0 or an isolated large value), so scales, saturation and tiny values all occur.
     */
    public static short[] wideRangeRows(int numTokens, int hidden, Random rnd) {
        short[] x = new short[numTokens * hidden];
        for (int b = 0; b < x.length / Fp8BlockQuantizer.BLOCK; b++) {
            int kind = rnd.nextInt(8);
            float magnitude = (float) Math.scalb(1.0, rnd.nextInt(61) - 30);
            for (int i = 0; i < Fp8BlockQuantizer.BLOCK; i++) {
                float v = kind == 0 ? 0f : (rnd.nextFloat() * 2f - 1f) * magnitude;
                if (kind == 1 && i == 7) {
                    v = -0.0f;
                } else if (kind == 2 && i == 100) {
                    v = magnitude * 1000f;   // one outlier sets the scale, the rest quantize small
                }
                x[b * Fp8BlockQuantizer.BLOCK + i] = Bf16.fromFloat(v);
            }
        }
        return x;
    }

    /** {@code numTokens x topK} weights in [0, 1), 0 where the top-k entry is -1. */
    public static float[] weights(int[] topk, Random rnd) {
        float[] w = new float[topk.length];
        for (int i = 0; i < w.length; i++) {
            w[i] = topk[i] == -1 ? 0f : rnd.nextFloat();
        }
        return w;
    }
}
