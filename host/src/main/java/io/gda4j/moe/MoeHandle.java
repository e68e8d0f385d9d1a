package io.gda4j.moe;

import io.gda4j.moe.ht.HighThroughputRank;

/**
 * What a layout found for one rank's tokens, and (after a dispatch) which received rows came from where: a later
 * dispatch may reuse it without a new top-k, and combine needs the one its dispatch returned. The data lives in the
 * {@link MoeBuffer}: a newer layout on the same rank replaces it, and a stale handle is refused.
 */
public final class MoeHandle {
    private final HighThroughputRank owner;
    private final long layoutGeneration;
    private final long dispatchGeneration;
    private final int numTokens;
    private final int[] tokensPerRank;
    private final int[] tokensPerExpert;
    /** The layout exchange this handle's layout queued (direct worlds; 0 elsewhere). */
    private final long exchange;

    MoeHandle(HighThroughputRank owner, long layoutGeneration, long dispatchGeneration, int numTokens, int[] tokensPerRank,
              int[] tokensPerExpert, long exchange) {
        this.owner = owner;
        this.layoutGeneration = layoutGeneration;
        this.dispatchGeneration = dispatchGeneration;
        this.numTokens = numTokens;
        this.tokensPerRank = tokensPerRank;
        this.tokensPerExpert = tokensPerExpert;
        this.exchange = exchange;
    }

    MoeHandle afterDispatch(long generation) {
        return new MoeHandle(owner, layoutGeneration, generation, numTokens, tokensPerRank, tokensPerExpert, exchange);
    }

    long exchange() {
        return exchange;
    }

    HighThroughputRank owner() {
        return owner;
    }

    long layoutGeneration() {
        return layoutGeneration;
    }

    long dispatchGeneration() {
        return dispatchGeneration;
    }

    /** Tokens of this rank the layout covered. */
    public int numTokens() {
        return numTokens;
    }

    /** How many of this rank's tokens go to each rank (each token once per rank). */
    public int[] tokensPerRank() {
        return tokensPerRank.clone();
    }

    /** How many (token, top-k slot) pairs of this rank name each expert. */
    public int[] tokensPerExpert() {
        return tokensPerExpert.clone();
    }
}
