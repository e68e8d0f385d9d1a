package io.gda4j.proxy;

import io.gda4j.ibgda.IbgdaTransport;
import io.gda4j.samples.Main;

/**
 * For {@code io.gda4j.LayeringTest} and {@code TransportNamesTest} only: the proxy using another transport's class
 * and a class of the samples above it, which their rules refuse.
 */
public final class LayeringFixtureProxyUsesIbgda {
    private LayeringFixtureProxyUsesIbgda() {
    }

    static boolean isIbgda(Object provider) {
        return provider instanceof IbgdaTransport;
    }

    static Class<?> commandLine() {
        return Main.class;
    }
}
