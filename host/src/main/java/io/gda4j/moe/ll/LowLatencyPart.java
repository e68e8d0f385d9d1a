package io.gda4j.moe.ll;

import io.gda4j.moe.core.MoePart;
import io.gda4j.moe.core.MoeShape;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.moe.tensor.Fp8BlockQuantizer;

/**
 * The low-latency (decoding) part of a MoeConfig (io.gda4j.moe.MoeConfig, which makes it): the hidden size, the most
 * tokens a rank sends in one call, the experts and top-k, and the dispatched element type: BF16, or FP8 e4m3 cast on
 * the fly with one FP32 scale per 128 channels ({@link Fp8BlockQuantizer}), optionally with power-of-two (UE8M0)
 * scales. Checked when it is made; immutable. The messages name the config's setters
 * ({@code MoeConfig lowLatency maxTokensPerRank ...}).
 */
public final class LowLatencyPart extends MoePart {
    /** The config the messages name: the part's token count and type are set by {@code lowLatency(tokens, type)}. */
    static final String OWNER = "MoeConfig lowLatency";

    private final boolean powerOfTwoScales;

    /** Throws IllegalArgumentException naming the field for the first value out of range. */
    public LowLatencyPart(MoeShape shape, boolean powerOfTwoScales) {
        super(shape, OWNER, "maxTokensPerRank", "dispatchType");
        this.powerOfTwoScales = powerOfTwoScales;
        if (powerOfTwoScales && dispatchType() != ElementType.FP8_E4M3) {
            throw new IllegalArgumentException("MoeConfig powerOfTwoScales applies to FP8 dispatch only;"
                    + " set the low-latency dispatch type to FP8_E4M3 or leave it off");
        }
    }

    /** The element type rows arrive in: BF16, or FP8_E4M3 with scales. Combine is always BF16. */
    public ElementType dispatchType() {
        return shape().type();
    }

    /** FP8 only: scales rounded up to powers of two (UE8M0), see {@link Fp8BlockQuantizer}. */
    public boolean powerOfTwoScales() {
        return powerOfTwoScales;
    }

    /**
     * What a world of {@code worldSize} ranks needs under the protocol asked for
     * ({@link LowLatencySizing.Protocol#requested()}); {@code staged}: whether some pair of its ranks is proxy or
     * ibgda (false: every pair is p2p or self, and the staging sections take no memory). Throws
     * IllegalArgumentException when the experts do not split evenly over the ranks or a size overflows the type the
     * kernels index it with (the message names it).
     */
    public LowLatencySizing sizing(int worldSize, boolean staged) {
        return sizing(worldSize, staged, LowLatencySizing.Protocol.requested());
    }

    /** As {@link #sizing(int, boolean)}, under {@code protocol} (where the world can run it). */
    public LowLatencySizing sizing(int worldSize, boolean staged, LowLatencySizing.Protocol protocol) {
        return new LowLatencySizing(this, worldSize, staged, protocol);
    }

    /**
     * What a world of {@code worldSize} ranks needs at most: the largest of the sizing with the staging sections that
     * proxy and ibgda peers use and those of a world whose pairs are all direct under either protocol.
     */
    public LowLatencySizing mostSizing(int worldSize) {
        LowLatencySizing most = sizing(worldSize, true, LowLatencySizing.Protocol.COUNTED);
        for (LowLatencySizing.Protocol p : LowLatencySizing.Protocol.values()) {
            LowLatencySizing direct = sizing(worldSize, false, p);
            most = direct.heapBytes() > most.heapBytes() ? direct : most;
        }
        return most;
    }

    /** The part's own values (the model, hidden size, experts and top-k, is the config's). */
    @Override
    public String toString() {
        return "maxTokensPerRank=" + maxTokensPerRank() + ", dispatchType=" + dispatchType() + ", powerOfTwoScales="
                + powerOfTwoScales;
    }
}
