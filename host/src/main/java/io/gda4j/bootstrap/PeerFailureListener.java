package io.gda4j.bootstrap;

/**
 * Told once per dead rank (and of every abort a live rank announces), from a bootstrap thread, so that a world can raise its device abort flags and stop kernels
 * that spin on the dead peer. Must not block: it runs on the thread that watches the connections.
 */
@FunctionalInterface
public interface PeerFailureListener {
    PeerFailureListener NONE = (rank, why) -> { };

    void onPeerFailure(int rank, String why);

    /**
     * Rank {@code rank} stopped its kernels ({@link Bootstrap#announceAbort}), alive: a world raises its own abort
     * flags so that kernels waiting for that rank return now rather than at their timeout. The bootstrap stays
     * usable. Same thread rules as {@link #onPeerFailure}.
     */
    default void onPeerAbort(int rank, String why) {
    }
}
