package io.gda4j.moe;

import io.gda4j.moe.ht.HighThroughputRank;
import io.gda4j.moe.tensor.DeviceTensor;

/**
 * What a dispatch queued: the received rows and their top-k, sorted by (source rank, token), in tensors the
 * {@link MoeBuffer} owns (sized for the worst case, {@code maxRecvTokens} rows; valid until the next dispatch on
 * the rank), and the handle combine needs. The counts are on the GPU; reading them on the host waits for the
 * dispatch ({@link #numRecvTokens()}, {@link #localExpertCounts()}). Once the rank dispatched again (or its buffer
 * closed) every getter but {@link #handle()} throws IllegalStateException: the tensors would show the newer call's data.
 */
public final class MoeDispatchResult {
    private final HighThroughputRank rank;
    private final MoeHandle handle;
    private final long generation;
    private int numRecv = -1;

    MoeDispatchResult(HighThroughputRank rank, MoeHandle handle, long generation) {
        this.rank = rank;
        this.handle = handle;
        this.generation = generation;
    }

    public MoeHandle handle() {
        return handle;
    }

    /** Received rows: {@code maxRecvTokens x hidden} of the config's type; the first numRecvTokens() are valid. */
    public DeviceTensor recvX() {
        rank.requireCurrentDispatch(generation, "recvX");
        return rank.recvX(HighThroughputRank.region(generation));
    }

    /** FP8 only: {@code maxRecvTokens x hidden/128} FP32 scales; null for BF16. */
    public DeviceTensor recvScales() {
        rank.requireCurrentDispatch(generation, "recvScales");
        return rank.recvScales(HighThroughputRank.region(generation));
    }

    /** {@code maxRecvTokens x topK} INT32: this rank's local expert index of each slot, -1 for another rank's. */
    public DeviceTensor recvTopkIdx() {
        rank.requireCurrentDispatch(generation, "recvTopkIdx");
        return rank.recvTopkIdx(HighThroughputRank.region(generation));
    }

    /** {@code maxRecvTokens x topK} FP32: the weights of the local slots, 0 elsewhere. */
    public DeviceTensor recvTopkWeights() {
        rank.requireCurrentDispatch(generation, "recvTopkWeights");
        return rank.recvTopkWeights(HighThroughputRank.region(generation));
    }

    /** {@code maxRecvTokens x 2} INT32: (source rank, source token) of each row. */
    public DeviceTensor recvSource() {
        rank.requireCurrentDispatch(generation, "recvSource");
        return rank.recvSource(HighThroughputRank.region(generation));
    }

    /** {@code numLocalExperts} INT32 on the GPU: (row, top-k slot) pairs per local expert. */
    public DeviceTensor localExpertCountsTensor() {
        rank.requireCurrentDispatch(generation, "localExpertCountsTensor");
        return rank.localExpertCountsTensor(handle.exchange());
    }

    /** Waits for the dispatch (an explicit host synchronisation) and returns how many rows arrived. */
    public int numRecvTokens() {
        // Checked before taking this result's lock: combine holds the rank's lock while it reads knownRecvTokens().
        rank.requireCurrentDispatch(generation, "numRecvTokens");
        synchronized (this) {
            if (numRecv < 0) {
                numRecv = rank.readRecvTotal(handle.exchange());
            }
            return numRecv;
        }
    }

    /** Waits for the dispatch and returns the per-local-expert counts. */
    public int[] localExpertCounts() {
        rank.requireCurrentDispatch(generation, "localExpertCounts");
        return rank.readLocalExpertCounts(handle.exchange());
    }

    /** The count when it was read already, else -1. */
    synchronized int knownRecvTokens() {
        return numRecv;
    }
}
