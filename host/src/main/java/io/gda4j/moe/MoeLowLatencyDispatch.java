package io.gda4j.moe;

import io.gda4j.moe.ll.AlternatingBuffers;
import io.gda4j.moe.ll.LowLatencyRank;
import io.gda4j.moe.tensor.DeviceTensor;

/**
 * What a low-latency dispatch queued: the rows this rank received, in the expert-major layout of its buffer
 * ({@code [numLocalExperts][slots][...]}, slots = worldSize x maxTokensPerRank, source s in
 * {@code [s maxTokensPerRank, (s + 1) maxTokensPerRank)} in its token order; see
 * io.gda4j.moe.check.MoeLowLatencyReference), and the per-expert counts on the GPU. The tensors live in the
 * {@link MoeBuffer}'s low-latency buffer of this call and are valid from the receive until the call is combined or
 * released. Slots past a source's count hold stale data.
 *
 * <p>Reading anything on the host ({@link #readCounts()}, {@link #checkRouting()}) waits for the rank's stream: an
 * explicit synchronisation, never needed by the calls themselves.
 */
public final class MoeLowLatencyDispatch {
    private final LowLatencyRank rank;
    private final AlternatingBuffers.Ticket ticket;
    private final int numTokens;

    MoeLowLatencyDispatch(LowLatencyRank rank, AlternatingBuffers.Ticket ticket, int numTokens) {
        this.rank = rank;
        this.ticket = ticket;
        this.numTokens = numTokens;
    }

    LowLatencyRank rankCalls() {
        return rank;
    }

    AlternatingBuffers.Ticket ticket() {
        return ticket;
    }

    /** This rank's dispatch number (from 0); it used buffer {@code call % 2}. */
    public long call() {
        return ticket.call();
    }

    public int buffer() {
        return ticket.buffer();
    }

    /** Tokens this rank sent. */
    public int numTokens() {
        return numTokens;
    }

    /**
     * The receive half of a dispatch made with {@code returnAfterSend}: queues the wait for every source's counts.
     * Throws IllegalStateException when the receive was queued already, or the call was consumed.
     */
    public void receive() {
        rank.receiveDispatch(ticket);
    }

    /**
     * Frees this call's buffer without a combine (after a receive). Every rank must be done reading it too, and every
     * rank's receive of it must have run: nothing on the GPU waits for the other ranks here (a combine's receive half
     * does, a barrier over all ranks), so a rank that released this call may reach the dispatch that reuses its buffer
     * two calls later while a slower rank has yet to receive this one, which would then take that newer call's count.
     * Synchronise the ranks (a host synchronisation or a collective) before that dispatch.
     */
    public void release() {
        rank.release(ticket);
    }

    private void requireReceived(String what) {
        AlternatingBuffers.State st = rank.state(ticket);
        if (st == AlternatingBuffers.State.DISPATCH_SENT) {
            throw new IllegalStateException(what + " of dispatch #" + ticket.call() + " before its receive(): call"
                    + " receive() first");
        }
        if (st == AlternatingBuffers.State.FREE) {
            throw new IllegalStateException(what + " of dispatch #" + ticket.call() + ", which was combined or released:"
                    + " its buffer may hold a newer call's rows");
        }
    }

    /** {@code [numLocalExperts][slots][hidden]} of the dispatch type (BF16, or FP8 e4m3 codes). */
    public DeviceTensor recvX() {
        requireReceived("recvX");
        return rank.recvX(ticket.buffer());
    }

    /** FP8 only: {@code [numLocalExperts][slots][hidden/128]} FP32 scales; null for BF16. */
    public DeviceTensor recvScales() {
        requireReceived("recvScales");
        return rank.recvScales(ticket.buffer());
    }

    /** {@code [numLocalExperts][slots][4]} INT32: (source rank, source token, top-k slot, 0) of each row. */
    public DeviceTensor recvSource() {
        requireReceived("recvSource");
        return rank.recvSource(ticket.buffer());
    }

    /**
     * {@code [numLocalExperts][slots][hidden]} BF16 in this call's buffer, shaped like the combine's y: write the
     * expert outputs here and pass this tensor as y, and no row is copied: where every pair of ranks is p2p or self,
     * each rank reads its tokens' rows from the experts' ranks while it sums them. Every rank of a combine must do
     * the same (pass its combine input, or each a tensor of its own): a rank that sees another do the other fails the
     * combine with an error naming both. Valid from the receive until the combine; it lives in the buffer, so the
     * combine two calls later (the next on this buffer) reuses it.
     */
    public DeviceTensor combineInput() {
        requireReceived("combineInput");
        return rank.combineInput(ticket.buffer());
    }

    /** {@code [numLocalExperts][worldSize]} INT32 on the GPU: rows received per (local expert, source). */
    public DeviceTensor countsPerSource() {
        requireReceived("countsPerSource");
        return rank.countsPerSource(ticket.buffer());
    }

    /** {@code [numLocalExperts]} INT32 on the GPU: rows received per local expert. */
    public DeviceTensor counts() {
        requireReceived("counts");
        return rank.counts(ticket.buffer());
    }

    /** Waits for the rank's stream and returns {@link #countsPerSource()} (row-major). */
    public int[] readCountsPerSource() {
        DeviceTensor t = countsPerSource();
        return rank.readInts(t, (int) (t.dim(0) * t.dim(1)));
    }

    /** Waits for the rank's stream and returns {@link #counts()}. */
    public int[] readCounts() {
        DeviceTensor t = counts();
        return rank.readInts(t, (int) t.dim(0));
    }

    /**
     * Waits for the rank's stream and throws IllegalArgumentException, naming the entry, when this call's top-k held
     * an index outside [-1, numExperts) (the kernels treated it as -1).
     */
    public void checkRouting() {
        requireReceived("checkRouting");
        long st = rank.readStatus(ticket.buffer());
        if (st != 0) {
            int k = rank.buffer().config().topK();
            long i = st - 1;
            throw new IllegalArgumentException("dispatch #" + ticket.call() + ": topkIdx[" + i / k + "][" + i % k
                    + "] is not an expert: indices must be in [0, " + rank.buffer().config().numExperts()
                    + ") or -1 for none; the kernels treated it as -1");
        }
    }
}
