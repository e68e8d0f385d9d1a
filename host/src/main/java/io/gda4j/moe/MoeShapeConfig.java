package io.gda4j.moe;

import java.util.Objects;

/**
 * The routing shape ({@link MoeShape}) that both configs hold and expose alike: {@link MoeConfig} and
 * {@link MoeLowLatencyConfig} take it from their builders ({@link MoeShapeBuilder}) and check it here, first, before
 * their own fields. The element type is part of the shape, but each config names it its own way ({@code dtype},
 * {@code dispatchType}), so its getter is theirs.
 */
abstract class MoeShapeConfig {
    private final MoeShape shape;

    /**
     * Throws NullPointerException naming {@code typeField} when the builder has no element type, and
     * IllegalArgumentException naming {@code owner} and the field for the first value out of range.
     */
    MoeShapeConfig(MoeShapeBuilder<?> b, String owner, String typeField) {
        this.shape = new MoeShape(b.hidden, b.maxTokensPerRank, b.numExperts, b.topK,
                Objects.requireNonNull(b.type, typeField));
        shape.check(owner, typeField);
    }

    /** The dispatched element type, under the config's own name for it. */
    ElementType type() {
        return shape.type();
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

    /** {@code b} with this shape set: what each config's {@code toBuilder()} starts from. */
    <B extends MoeShapeBuilder<B>> B shapeInto(B b) {
        b.type = shape.type();
        return b.hidden(shape.hidden()).maxTokensPerRank(shape.maxTokensPerRank()).numExperts(shape.numExperts())
                .topK(shape.topK());
    }
}
