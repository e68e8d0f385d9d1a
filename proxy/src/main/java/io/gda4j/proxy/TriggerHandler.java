package io.gda4j.proxy;

/**
 * Executes the triggers of one channel, in FIFO order, on the proxy thread that owns the channel (the copy engine
 * now; host-posted NIC work later). Called from a polling loop: must not allocate and should not block; throw to stop
 * the channel (the exception's message becomes the channel's problem).
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
