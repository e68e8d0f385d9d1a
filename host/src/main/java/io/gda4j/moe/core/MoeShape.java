package io.gda4j.moe.core;

import io.gda4j.moe.tensor.ElementType;
import io.gda4j.moe.tensor.Fp8BlockQuantizer;

/**
 * What each part of a MoE config is sized for and checks alike: the hidden size, the most tokens a rank sends in one
 * call, the experts, the top-k and the dispatched element type. The high-throughput and the low-latency parts
 * (io.gda4j.moe.ht, io.gda4j.moe.ll) check theirs here, with the names the user set them by in the messages (the
 * command line turns those into its options).
 *
 * @param hidden           channels of a token's row (a multiple of {@value Fp8BlockQuantizer#BLOCK})
 * @param maxTokensPerRank the most tokens a rank sends in one call
 * @param numExperts       experts of the model, split evenly over the ranks
 * @param topK             experts each token goes to (entries of its top-k row)
 * @param type             the dispatched element type
 */
public record MoeShape(int hidden, int maxTokensPerRank, int numExperts, int topK, ElementType type) {
    /** The most experts a token may be routed to: one lane of a warp per top-k slot. */
    public static final int MAX_TOP_K = 32;
    /**
     * The most ranks: a high-throughput dispatch block has a warp per rank, blocks hold at most 512 threads, and the
     * kernels' shared arrays hold one entry per rank ({@code MAX_RANKS} in gda4j/moe/moe.cuh).
     */
    public static final int MAX_RANKS = 16;

    /**
     * Throws IllegalArgumentException naming {@code owner} and the field for the first value out of range.
     *
     * @param tokensField the token count's name in the owner ({@code maxTokensPerRank})
     * @param typeField   the element type's name in the owner ({@code dtype}, {@code dispatchType})
     */
    public void check(String owner, String tokensField, String typeField) {
        positive(owner, "hidden", hidden);
        positive(owner, tokensField, maxTokensPerRank);
        positive(owner, "numExperts", numExperts);
        if (type != ElementType.BF16 && type != ElementType.FP8_E4M3) {
            throw new IllegalArgumentException(owner + " " + typeField + " must be BF16 or FP8_E4M3, got " + type);
        }
        if (hidden % Fp8BlockQuantizer.BLOCK != 0) {
            throw new IllegalArgumentException(owner + " hidden must be a multiple of " + Fp8BlockQuantizer.BLOCK
                    + " (rows move as 16-byte vectors, a warp casts 128 channels at a time, and FP8 scales cover 128"
                    + " channels), got " + hidden);
        }
        if (topK < 1 || topK > MAX_TOP_K || topK > numExperts) {
            throw new IllegalArgumentException(owner + " topK must be in 1.." + Math.min(MAX_TOP_K, numExperts)
                    + " (at most numExperts and " + MAX_TOP_K + ", one lane per top-k slot), got " + topK);
        }
    }

    /** Throws IllegalArgumentException naming {@code owner} and {@code field} unless {@code value > 0}. */
    public static void positive(String owner, String field, int value) {
        if (value <= 0) {
            throw new IllegalArgumentException(owner + " " + field + " must be > 0, got " + value);
        }
    }

    /**
     * Throws IllegalArgumentException unless {@code worldSize} is 1..{@link #MAX_RANKS} and splits the experts evenly
     * ({@code owner} names the config in the message).
     */
    public void checkWorld(String owner, int worldSize) {
        if (worldSize < 1 || worldSize > MAX_RANKS) {
            throw new IllegalArgumentException("MoE needs 1.." + MAX_RANKS + " ranks, the world has " + worldSize);
        }
        if (numExperts % worldSize != 0) {
            throw new IllegalArgumentException(owner + " numExperts (" + numExperts + ") must be a multiple of the world"
                    + " size (" + worldSize + "): each rank holds the same number of experts");
        }
    }
}
