package io.gda4j.proxy;

/**
 * Executes the triggers of one channel, in FIFO order, on the proxy thread that owns the channel (the copy engine
 * within a host, host-posted RDMA work requests across hosts). Called from a polling loop: must not allocate and
 * should not block; throw to stop the channel (the exception's message becomes the channel's problem).
 *
 * <p>Each poll of the channel offers the published triggers in order: {@link #admits} may hold the next one back
 * (no credit, no room), which leaves it in the FIFO for a later poll; otherwise {@link #onTrigger} executes (or
 * queues) it and it is popped. Then {@link #progress()} runs (publish what the batch queued, completions, credits,
 * flushes), also when no trigger came.
 */
public interface TriggerHandler {
    /**
     * Executes, or starts, one trigger. The words carry no lap bits.
     *
     * @param position position of the trigger's first slot in the FIFO
     * @param word0    first word
     * @param word1    second word
     * @param next0    PUT_SIGNAL: first word of the second slot (the signal); 0 for one-slot kinds
     * @param next1    PUT_SIGNAL: second word of the second slot; 0 for one-slot kinds
     */
    void onTrigger(long position, long word0, long word1, long next0, long next1);

    /**
     * Whether the trigger at {@code position} (first word {@code word0}, lap bits cleared) may be executed now. False
     * is back-pressure: the trigger stays in the FIFO and is offered again at the next poll. Throw to fail the
     * channel (a wait that lasted too long). The copy engine admits everything.
     */
    default boolean admits(long position, long word0) {
        return true;
    }

    /**
     * Work that does not wait for a trigger (ringing the doorbell for what the batch queued, reaping completions,
     * granting credits, publishing flushes); called at the end of every poll of the channel. Returns the work done
     * (0 when idle). Throw to fail the channel.
     */
    default int progress() {
        return 0;
    }

    /**
     * Waits until everything started so far has completed, at most {@code timeoutNanos}; true when it has. Called
     * when the channel is closed, from the closing thread, after its last {@link #onTrigger}.
     */
    default boolean awaitCompletion(long timeoutNanos) {
        return true;
    }

    /** What is still in flight, for a shutdown message (e.g. "copies up to position 1234"); empty when nothing. */
    default String inFlight() {
        return "";
    }
}
