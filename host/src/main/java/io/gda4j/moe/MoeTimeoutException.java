package io.gda4j.moe;

import io.gda4j.world.DeviceWaitTimeoutException;

/**
 * A MoE kernel gave up waiting for a peer: the message names the waiting rank, the peer it waited for, the counter
 * (which channel, which direction) and the values expected and seen.
 */
public final class MoeTimeoutException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int rank;
    private final int peer;

    MoeTimeoutException(String message, int rank, int peer, DeviceWaitTimeoutException cause) {
        super(message, cause);
        this.rank = rank;
        this.peer = peer;
    }

    /** The rank that waited. */
    public int rank() {
        return rank;
    }

    /** The rank it waited for. */
    public int peer() {
        return peer;
    }
}
