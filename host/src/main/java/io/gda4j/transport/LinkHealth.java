package io.gda4j.transport;

import java.util.Optional;

/**
 * Implemented by a {@link PeerLink}'s resources that can go wrong after the link is connected (a proxy thread that
 * died or was stopped, a queue pair in error). When a device call fails or times out, the world appends what every
 * link reports, so the message names the component that should have answered instead of only the wait that ran out.
 */
public interface LinkHealth {
    /** One sentence saying what is wrong and what to do, or empty when the link is healthy. Cheap; never throws. */
    Optional<String> problem();
}
