package io.gda4j.moe.ht;

/**
 * How a rank's tokens are split over channels (two thread blocks each): {@code ceil(numTokens / numChannels)} tokens each,
 * contiguous, the last ones possibly short or empty. The layout, dispatch and combine kernels compute the same
 * ranges ({@code gda4j/moe/ht.cuh: channel_start, channel_end}).
 */
public final class MoeChannels {
    private MoeChannels() {
    }

    public static int tokensPerChannel(int numTokens, int numChannels) {
        return (numTokens + numChannels - 1) / numChannels;
    }

    /** First token of {@code channel}. */
    public static int start(int numTokens, int numChannels, int channel) {
        return (int) Math.min((long) channel * tokensPerChannel(numTokens, numChannels), numTokens);
    }

    /** One past the last token of {@code channel}. */
    public static int end(int numTokens, int numChannels, int channel) {
        return (int) Math.min((long) (channel + 1) * tokensPerChannel(numTokens, numChannels), numTokens);
    }

    /** The channel that carries {@code token}. */
    public static int of(int numTokens, int numChannels, int token) {
        return token / tokensPerChannel(numTokens, numChannels);
    }
}
