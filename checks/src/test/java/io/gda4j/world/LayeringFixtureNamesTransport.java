package io.gda4j.world;

import io.gda4j.p2p.P2pTransport;
import io.gda4j.transport.Transport;
import io.gda4j.transport.TransportProvider;

/**
 * For {@code io.gda4j.LayeringTest} and {@code TransportNamesTest} only: the world asking which transport a pair
 * is, which their rules refuse (the word proxy in this comment is only a comment, which the source rule lets be).
 */
public final class LayeringFixtureNamesTransport {
    private LayeringFixtureNamesTransport() {
    }

    static boolean isP2p(TransportProvider provider) {
        return provider instanceof P2pTransport;
    }

    static boolean isProxy(Transport transport) {
        return transport == Transport.PROXY;
    }

    static String path() {
        return "over the proxy";
    }
}
