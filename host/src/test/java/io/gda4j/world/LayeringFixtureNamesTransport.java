package io.gda4j.world;

import io.gda4j.p2p.P2pTransport;
import io.gda4j.transport.TransportTag;

/** For {@code io.gda4j.LayeringTest} only: the world comparing a tag with a provider's, which its rules refuse. */
public final class LayeringFixtureNamesTransport {
    private LayeringFixtureNamesTransport() {
    }

    static boolean isP2p(TransportTag tag) {
        return tag == P2pTransport.TAG;
    }
}
