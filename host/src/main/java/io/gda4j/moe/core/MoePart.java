package io.gda4j.moe.core;

/**
 * What each mode's part of a MoeConfig (io.gda4j.moe.ht.HighThroughputPart, io.gda4j.moe.ll.LowLatencyPart) holds
 * and exposes alike: the shape it is sized for ({@link MoeShape}), checked first, before the part's own fields. The
 * element type is part of the shape, but each part names it its own way ({@code dtype}, {@code dispatchType}), so
 * its getter is theirs.
 */
public abstract class MoePart {
    private final MoeShape shape;

    /**
     * Throws IllegalArgumentException naming {@code owner} and the field for the first value of {@code shape} out of
     * range ({@link MoeShape#check}).
     */
    protected MoePart(MoeShape shape, String owner, String tokensField, String typeField) {
        shape.check(owner, tokensField, typeField);
        this.shape = shape;
    }

    public MoeShape shape() {
        return shape;
    }

    /** Channels of a token's row (a multiple of 128). */
    public int hidden() {
        return shape.hidden();
    }

    /** The most tokens a rank sends in one call. */
    public int maxTokensPerRank() {
        return shape.maxTokensPerRank();
    }

    /** Experts of the model, split evenly over the ranks. */
    public int numExperts() {
        return shape.numExperts();
    }

    /** Experts each token goes to (entries of its top-k row). */
    public int topK() {
        return shape.topK();
    }
}
