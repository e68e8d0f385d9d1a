package io.gda4j.moe;

import io.gda4j.moe.ll.AlternatingBuffers;
import io.gda4j.moe.ll.LowLatencyRank;
import io.gda4j.moe.tensor.DeviceTensor;

/**
 * What a low-latency combine queued: after {@link #receive()} (queued already unless the combine was made with
 * {@code returnAfterSend}), {@link #output()} is this rank's {@code numTokens x hidden} BF16 result, in a tensor the
 * {@link MoeBuffer} owns: valid until the next combine on the same buffer (two calls later), after which
 * {@link #output()} throws.
 */
public final class MoeLowLatencyCombine {
    private final LowLatencyRank rank;
    private final AlternatingBuffers.Ticket ticket;
    private final int numTokens;
    private final DeviceTensor topkIdx;
    private final DeviceTensor topkWeights;
    private final boolean pull;
    private boolean received;

    MoeLowLatencyCombine(LowLatencyRank rank, AlternatingBuffers.Ticket ticket, int numTokens, DeviceTensor topkIdx,
                         DeviceTensor topkWeights, boolean pull) {
        this.rank = rank;
        this.ticket = ticket;
        this.numTokens = numTokens;
        this.topkIdx = topkIdx;
        this.topkWeights = topkWeights;
        this.pull = pull;
    }

    AlternatingBuffers.Ticket ticket() {
        return ticket;
    }

    int numTokens() {
        return numTokens;
    }

    DeviceTensor topkIdx() {
        return topkIdx;
    }

    DeviceTensor topkWeights() {
        return topkWeights;
    }

    /** Whether the receive half reads the rows from the experts' combine inputs (nothing was copied). */
    boolean pull() {
        return pull;
    }

    /** A combine made without the split: its one kernel (both halves) is queued. */
    synchronized void markReceived() {
        received = true;
    }

    /** The receive half: queues the wait for the experts' rows and the weighted sum. Frees the call's buffer. */
    public synchronized void receive() {
        rank.receiveCombine(ticket, topkIdx, topkWeights, numTokens, pull);
        received = true;
    }

    /**
     * {@code numTokens x hidden} BF16; throws before {@link #receive()} was queued, and once the combine two calls later
     * (the next one on the same buffer) was queued: it writes its output there.
     */
    public DeviceTensor output() {
        synchronized (this) {
            if (!received) {
                throw new IllegalStateException("the combine of dispatch #" + ticket.call() + " was made with"
                        + " returnAfterSend: call receive() first");
            }
        }
        // Outside this object's lock: the rank's calls hold the rank's lock while they take a new combine's.
        return rank.combinedOutput(ticket, numTokens);
    }
}
