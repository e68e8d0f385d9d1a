package io.gda4j.bootstrap;

/**
 * Told once per dead rank, from a bootstrap thread, so that a world can raise its device abort flags and stop kernels
 * that spin on the dead peer. Must not block: it runs on the thread that watches the connections.
 */
@FunctionalInterface
public interface PeerFailureListener {
    PeerFailureListener NONE = (rank, why) -> { };

    void onPeerFailure(int rank, String why);
}
