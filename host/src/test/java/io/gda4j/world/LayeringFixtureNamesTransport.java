package io.gda4j.world;

import io.gda4j.p2p.P2pTransport;
import io.gda4j.transport.Transport;
import io.gda4j.transport.TransportProvider;

/** For {@code io.gda4j.LayeringTest} only: the world asking which transport a pair is, which its rules refuse. */
public final class LayeringFixtureNamesTransport {
    private LayeringFixtureNamesTransport() {
    }

    static boolean isP2p(TransportProvider provider) {
        return provider instanceof P2pTransport;
    }

    static boolean isProxy(Transport transport) {
        return transport == Transport.PROXY;
    }
}
