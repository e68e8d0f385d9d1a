package io.gda4j.moe;

/**
 * What both MoE buffers are sized for and check alike: the hidden size, the most tokens a rank sends in one call, the
 * experts, the top-k and the dispatched element type. {@link MoeConfig} and {@link MoeLowLatencyConfig} check theirs
 * here, with their own name and field names in the messages (the command line turns those into its options).
 */
record MoeShape(int hidden, int maxTokensPerRank, int numExperts, int topK, ElementType type) {
    /**
     * Throws IllegalArgumentException naming {@code owner} and the field for the first value out of range.
     *
     * @param typeField the element type's field in the owner ({@code dtype}, {@code dispatchType})
     */
    void check(String owner, String typeField) {
        positive(owner, "hidden", hidden);
        positive(owner, "maxTokensPerRank", maxTokensPerRank);
        positive(owner, "numExperts", numExperts);
        if (type != ElementType.BF16 && type != ElementType.FP8_E4M3) {
            throw new IllegalArgumentException(owner + " " + typeField + " must be BF16 or FP8_E4M3, got " + type);
        }
        if (hidden % MoeConfig.FP8_SCALE_BLOCK != 0) {
            throw new IllegalArgumentException(owner + " hidden must be a multiple of " + MoeConfig.FP8_SCALE_BLOCK
                    + " (rows move as 16-byte vectors, a warp casts 128 channels at a time, and FP8 scales cover 128"
                    + " channels), got " + hidden);
        }
        if (topK < 1 || topK > MoeConfig.MAX_TOP_K || topK > numExperts) {
            throw new IllegalArgumentException(owner + " topK must be in 1.." + Math.min(MoeConfig.MAX_TOP_K, numExperts)
                    + " (at most numExperts and " + MoeConfig.MAX_TOP_K + ", one lane per top-k slot), got " + topK);
        }
    }

    /** Throws IllegalArgumentException naming {@code owner} and {@code field} unless {@code value > 0}. */
    static void positive(String owner, String field, int value) {
        if (value <= 0) {
            throw new IllegalArgumentException(owner + " " + field + " must be > 0, got " + value);
        }
    }
}
