package io.gda4j.moe;

import java.util.Random;

/**
 * Routings and rows for low-latency tests and benchmarks: {@link MoeRouting}'s cases plus the two only the
 * low-latency path has to care about (every token on one expert; an expert repeated within a token's top-k), and BF16
 * rows whose 128-channel blocks span very different magnitudes (zeros, subnormal-range values, values near the BF16
 * maximum), so every FP8 scale path is taken.
 */
public final class MoeLowLatencyRouting {
    private MoeLowLatencyRouting() {
    }

    /** The routing cases. */
    public enum Kind {
        UNIFORM(MoeRouting.Kind.UNIFORM),
        SKEWED(MoeRouting.Kind.SKEWED),
        WITH_NONE(MoeRouting.Kind.WITH_NONE),
        ONE_RANK_PER_TOKEN(MoeRouting.Kind.ONE_RANK_PER_TOKEN),
        ALL_TO_RANK_ZERO(MoeRouting.Kind.ALL_TO_RANK_ZERO),
        /** Every token names one expert (the last one) in slot 0, -1 elsewhere: one expert gets every row. */
        ONE_EXPERT(null),
        /** Uniform, but slot k >= 1 repeats slot k - 1's expert with probability 1/3: repeats add no rows. */
        REPEATS(null);

        private final MoeRouting.Kind base;

        Kind(MoeRouting.Kind base) {
            this.base = base;
        }
    }

    /** {@code numTokens x topK} expert indices of one rank. */
    public static int[] topk(Kind kind, int numTokens, int topK, int numExperts, int worldSize, Random rnd) {
        if (kind.base != null) {
            return MoeRouting.topk(kind.base, numTokens, topK, numExperts, worldSize, rnd);
        }
        int[] idx;
        if (kind == Kind.ONE_EXPERT) {
            idx = new int[numTokens * topK];
            java.util.Arrays.fill(idx, -1);
            for (int t = 0; t < numTokens; t++) {
                idx[t * topK] = numExperts - 1;
            }
            return idx;
        }
        idx = MoeRouting.topk(MoeRouting.Kind.UNIFORM, numTokens, topK, numExperts, worldSize, rnd);
        for (int t = 0; t < numTokens; t++) {
            for (int k = 1; k < topK; k++) {
                if (rnd.nextInt(3) == 0) {
                    idx[t * topK + k] = idx[t * topK + k - 1];
                }
            }
        }
        return idx;
    }

    /**
     * {@code numTokens x hidden} BF16 rows: each 128-channel block draws its magnitude from 2^-30 .. 2^30 (some blocks
     * all zero, some holding a -0 or an isolated large value), so scales, saturation and tiny values all occur.
     */
    public static short[] rows(int numTokens, int hidden, Random rnd) {
        short[] x = new short[numTokens * hidden];
        for (int b = 0; b < x.length / MoeConfig.FP8_SCALE_BLOCK; b++) {
            int kind = rnd.nextInt(8);
            float magnitude = (float) Math.scalb(1.0, rnd.nextInt(61) - 30);
            for (int i = 0; i < MoeConfig.FP8_SCALE_BLOCK; i++) {
                float v = kind == 0 ? 0f : (rnd.nextFloat() * 2f - 1f) * magnitude;
                if (kind == 1 && i == 7) {
                    v = -0.0f;
                } else if (kind == 2 && i == 100) {
                    v = magnitude * 1000f;   // one outlier sets the scale, the rest quantize small
                }
                x[b * MoeConfig.FP8_SCALE_BLOCK + i] = Bf16.fromFloat(v);
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
