package io.gda4j.moe;

/**
 * What a low-latency (decoding) dispatch/combine is sized for: the hidden size, the most tokens a rank sends in one
 * call, the experts and top-k, and the dispatched element type: BF16, or FP8 e4m3 cast on the fly with one FP32 scale
 * per 128 channels ({@link Fp8BlockQuantizer}), optionally with power-of-two (UE8M0) scales. Immutable; make one with
 * {@link #builder()}; {@link #sizing(int)} gives the sizes in a world and refuses overflowing ones.
 */
public final class MoeLowLatencyConfig extends MoeShapeConfig {
    private final boolean powerOfTwoScales;

    private MoeLowLatencyConfig(Builder b) {
        super(b, "MoeLowLatencyConfig", "dispatchType");
        this.powerOfTwoScales = b.powerOfTwoScales;
        if (powerOfTwoScales && dispatchType() != ElementType.FP8_E4M3) {
            throw new IllegalArgumentException("MoeLowLatencyConfig powerOfTwoScales applies to FP8 dispatch only;"
                    + " set dispatchType(FP8_E4M3) or leave it off");
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /** DeepEP's low-latency benchmark: 128 tokens per rank, hidden 7168, top-8 of 256 experts, FP8 dispatch. */
    public static Builder deepEpBuilder() {
        return builder().hidden(7168).maxTokensPerRank(128).numExperts(256).topK(8).dispatchType(ElementType.FP8_E4M3);
    }

    public Builder toBuilder() {
        return shapeInto(new Builder()).powerOfTwoScales(powerOfTwoScales);
    }

    /** The element type rows arrive in: BF16, or FP8_E4M3 with scales. Combine is always BF16. */
    public ElementType dispatchType() {
        return type();
    }

    /** FP8 only: scales rounded up to powers of two (UE8M0), see {@link Fp8BlockQuantizer}. */
    public boolean powerOfTwoScales() {
        return powerOfTwoScales;
    }

    /**
     * What a world of {@code worldSize} ranks needs at most: the largest of the sizing with the staging sections that
     * proxy and ibgda peers use and those of a world whose pairs are all direct under either protocol, so the heap it
     * names is enough for any world of that size. Throws IllegalArgumentException when the experts do not split
     * evenly over the ranks or a size overflows the type the kernels index it with (the message names it).
     */
    public MoeLowLatencySizing sizing(int worldSize) {
        MoeLowLatencySizing most = sizing(worldSize, true, MoeLowLatencySizing.Protocol.COUNTED);
        for (MoeLowLatencySizing.Protocol p : MoeLowLatencySizing.Protocol.values()) {
            MoeLowLatencySizing direct = sizing(worldSize, false, p);
            most = direct.heapBytes() > most.heapBytes() ? direct : most;
        }
        return most;
    }

    /**
     * What a world of {@code worldSize} ranks needs under the protocol asked for
     * ({@link MoeLowLatencySizing.Protocol#requested()}); {@code staged}: whether some pair of its ranks is proxy or
     * ibgda (false: every pair is p2p or self, and the staging sections take no memory).
     */
    public MoeLowLatencySizing sizing(int worldSize, boolean staged) {
        return sizing(worldSize, staged, MoeLowLatencySizing.Protocol.requested());
    }

    /** What a world of {@code worldSize} ranks needs under {@code protocol} (where the world can run it). */
    public MoeLowLatencySizing sizing(int worldSize, boolean staged, MoeLowLatencySizing.Protocol protocol) {
        return new MoeLowLatencySizing(this, worldSize, staged, protocol);
    }

    @Override
    public String toString() {
        return "MoeLowLatencyConfig{hidden=" + hidden() + ", maxTokensPerRank=" + maxTokensPerRank() + ", numExperts="
                + numExperts() + ", topK=" + topK() + ", dispatchType=" + dispatchType() + ", powerOfTwoScales="
                + powerOfTwoScales + "}";
    }

    /** Defaults: BF16 dispatch, no power-of-two scales. */
    public static final class Builder extends MoeShapeBuilder<Builder> {
        private boolean powerOfTwoScales;

        @Override
        Builder self() {
            return this;
        }

        public Builder dispatchType(ElementType v) {
            type = v;
            return this;
        }

        public Builder powerOfTwoScales(boolean v) {
            powerOfTwoScales = v;
            return this;
        }

        public MoeLowLatencyConfig build() {
            return new MoeLowLatencyConfig(this);
        }
    }
}
