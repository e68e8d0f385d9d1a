package io.gda4j.moe.ht;

/**
 * Which layout and which dispatch of one high-throughput rank are current, so that a MoeHandle or a
 * MoeDispatchResult whose data a later call may have overwritten is refused on the host, before any kernel
 * trusts it. Plain Java; not thread-safe (its rank's calls are synchronized).
 *
 * <p>A call retires the earlier ones when it may first touch the GPU, not when it succeeds: the layout kernel rewrites
 * the rank's routing (token slots, channel counts) before it checks the expert indices, so a layout refused for a bad
 * index, or one that failed midway, has overwritten what the earlier handle described (a dispatch with that handle
 * would announce one routing's counts and send another's rows: its peers would wait forever); a dispatch zeroes the
 * expert counts of the one before it as it starts. A call refused on the host before anything is queued retires
 * nothing.
 */
final class CallGenerations {
    private final int rank;
    private long layout;
    private long dispatch;

    CallGenerations(int rank) {
        this.rank = rank;
    }

    /** A layout is about to reach the GPU: the handles of the earlier ones are stale from now on. Its generation. */
    long beginLayout() {
        return ++layout;
    }

    /** A dispatch is about to reach the GPU: the results of the earlier ones are stale from now on. Its generation. */
    long beginDispatch() {
        return ++dispatch;
    }

    /** Throws IllegalStateException unless {@code generation} is the latest layout's. */
    void requireLayout(long generation) {
        if (generation != layout) {
            throw new IllegalStateException("this handle is stale: rank " + rank + " ran a newer layout since (one that"
                    + " was refused for a bad expert index counts too: the layout kernel rewrites the routing before it"
                    + " checks the indices); run layout again on rank " + rank + " and dispatch with the handle it returns");
        }
    }

    /** Throws IllegalStateException, naming {@code what}, unless {@code generation} is the latest dispatch's. */
    void requireDispatch(long generation, String what) {
        if (generation != dispatch) {
            throw new IllegalStateException(what + " of dispatch #" + generation + ": rank " + rank + " dispatched again"
                    + " since (#" + dispatch + "), and the outputs it shares with that call may hold its rows; read and"
                    + " combine a dispatch's results before the next dispatch on its rank");
        }
    }
}
