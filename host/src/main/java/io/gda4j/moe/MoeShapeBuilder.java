package io.gda4j.moe;

/**
 * The setters of the routing shape ({@link MoeShape}) that both configs' builders have: {@link MoeConfig.Builder}
 * and {@link MoeLowLatencyConfig.Builder} (the element type's setter is each builder's own, under its config's name
 * for it). Each setter returns the builder it was called on ({@code B}), so the calls chain on either; the config
 * checks the values when it is built ({@link MoeShapeConfig}).
 *
 * @param <B> the builder itself
 */
abstract class MoeShapeBuilder<B extends MoeShapeBuilder<B>> {
    int hidden;
    int maxTokensPerRank;
    int numExperts;
    int topK;
    /** Set under each builder's own name for it ({@code dtype}, {@code dispatchType}); BF16 in both. */
    ElementType type = ElementType.BF16;

    abstract B self();

    /** Channels of a token's row (a multiple of 128). */
    public B hidden(int v) {
        hidden = v;
        return self();
    }

    /** The most tokens a rank sends in one call. */
    public B maxTokensPerRank(int v) {
        maxTokensPerRank = v;
        return self();
    }

    /** Experts of the model, split evenly over the ranks. */
    public B numExperts(int v) {
        numExperts = v;
        return self();
    }

    /** Experts each token goes to (entries of its top-k row). */
    public B topK(int v) {
        topK = v;
        return self();
    }
}
