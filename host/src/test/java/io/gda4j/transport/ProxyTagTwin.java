package io.gda4j.transport;

import io.gda4j.world.DeviceViewDescriptor;

/**
 * The proxy transport's tag for host tests, which cannot see the gda4j-proxy module that owns it
 * ({@code io.gda4j.proxy.ProxyTransport.TAG}). Safe because {@link TransportTag#define} returns the registered tag
 * for an identical definition: in a JVM that loads both (the proxy's and the samples' tests, whose class path holds
 * this test jar), the twin and the provider's constant are one instance, and a twin that drifted from the provider
 * would make whichever loads second fail with the conflict. The proxy module's {@code ProxyTagTest} asserts that
 * they are the same instance, and host's {@code DeviceViewLayoutTest} checks the twin's code against view.cuh.
 */
public final class ProxyTagTwin {
    /** Exactly as {@code ProxyTransport.TAG} defines it. */
    public static final TransportTag TAG = TransportTag.define("proxy", 4, "the proxy",
            DeviceViewDescriptor.VIEW_FLAG_PROXY_PEERS, TransportTag.Trait.GPU_ATOMICS);

    private ProxyTagTwin() {
    }
}
