package io.gda4j.moe.ll;

/**
 * Which of a rank's two low-latency buffers each call uses, and whether that is safe: plain Java, checked before any
 * kernel is launched. Dispatch number i (counted from 0) takes buffer i % 2 and holds it until its results are
 * consumed; a dispatch that would take a buffer still held throws, naming the call that holds it. So two dispatches
 * may be outstanding (send the next batch while the experts work on this one), never three.
 *
 * <pre>
 *   FREE --dispatch--&gt; DISPATCH_SENT --receive--&gt; DISPATCHED --combine send--&gt; COMBINE_SENT --combine receive--&gt; FREE
 *                                                  DISPATCHED --release--&gt; FREE
 * </pre>
 * A dispatch or combine without the send/receive split makes both steps at once. Not thread-safe: its rank's calls
 * are synchronized.
 */
public final class AlternatingBuffers {
    public enum State { FREE, DISPATCH_SENT, DISPATCHED, COMBINE_SENT }

    /** A dispatch's claim on its buffer: which call, which buffer. */
    public record Ticket(long call, int buffer) {
    }

    private final State[] state = {State.FREE, State.FREE};
    private final long[] owner = {-1, -1};
    private long calls;

    AlternatingBuffers() {
    }

    /** Claims the next buffer for a new dispatch, or throws IllegalStateException while its last user holds it. */
    Ticket dispatch() {
        int b = (int) (calls % 2);
        if (state[b] != State.FREE) {
            throw new IllegalStateException("low-latency dispatch #" + calls + " needs buffer " + b + ", still held by"
                    + " dispatch #" + owner[b] + " (" + describe(state[b]) + "): combine or release dispatch #"
                    + owner[b] + " first; at most two dispatches may be outstanding");
        }
        state[b] = State.DISPATCH_SENT;
        owner[b] = calls;
        return new Ticket(calls++, b);
    }

    /** The dispatch's receive half: its rows are to be waited for now. */
    void receive(Ticket t) {
        require(t, State.DISPATCH_SENT, "receive");
        state[t.buffer()] = State.DISPATCHED;
    }

    /** The combine's send half of the dispatch {@code t}. */
    void combineSend(Ticket t) {
        require(t, State.DISPATCHED, "combine");
        state[t.buffer()] = State.COMBINE_SENT;
    }

    /** The combine's receive half: the buffer is free afterwards. */
    void combineReceive(Ticket t) {
        require(t, State.COMBINE_SENT, "receive the combine of");
        free(t);
    }

    /** Frees a received dispatch that will not be combined. */
    void release(Ticket t) {
        require(t, State.DISPATCHED, "release");
        free(t);
    }

    /** The state of the buffer {@code t} claimed, as far as {@code t} is concerned (FREE once it was consumed). */
    State state(Ticket t) {
        return owner[t.buffer()] == t.call() ? state[t.buffer()] : State.FREE;
    }

    private void free(Ticket t) {
        state[t.buffer()] = State.FREE;
        owner[t.buffer()] = -1;
    }

    private void require(Ticket t, State wanted, String what) {
        int b = t.buffer();
        if (owner[b] != t.call()) {
            throw new IllegalStateException("cannot " + what + " dispatch #" + t.call() + ": it was consumed already"
                    + " (combined or released), and buffer " + b + " may hold a newer call's data");
        }
        if (state[b] != wanted) {
            throw new IllegalStateException("cannot " + what + " dispatch #" + t.call() + ": it is " + describe(state[b])
                    + "; " + next(state[b]));
        }
    }

    private static String describe(State s) {
        return switch (s) {
            case FREE -> "free";
            case DISPATCH_SENT -> "sent, its receive not yet called";
            case DISPATCHED -> "received, not yet combined or released";
            case COMBINE_SENT -> "combine sent, its receive not yet called";
        };
    }

    private static String next(State s) {
        return switch (s) {
            case FREE -> "dispatch first";
            case DISPATCH_SENT -> "call its receive() first";
            case DISPATCHED -> "combine or release it";
            case COMBINE_SENT -> "call the combine's receive() next";
        };
    }
}
