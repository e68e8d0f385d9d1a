/**
 * The transport SPI, below the world: a {@link io.gda4j.transport.TransportProvider} (found through
 * {@link java.util.ServiceLoader}) is handed {@link io.gda4j.transport.LinkEnd}s and
 * {@link io.gda4j.transport.RemotePeer}s and makes {@link io.gda4j.transport.PeerLink}s, whose resources may report
 * problems through {@link io.gda4j.transport.LinkHealth}. The package names no type of the world and no transport.
 *
 * <h2>Tags</h2>
 * A peer entry's {@link io.gda4j.transport.TransportTag} is an open set: the world's {@code NONE} and {@code SELF} are
 * defined here, and each provider defines its own tag as a constant of its class ({@code P2pTransport.TAG},
 * {@code IbgdaTransport.TAG}, {@code ProxyTransport.TAG}) with its device code, the device view flags its peers set, a
 * phrase for messages and its {@linkplain io.gda4j.transport.TransportTag.Trait traits}. The world and the MoE buffers
 * ask a tag's traits, never which transport it is, so a provider owns its tag, its device code, its error decoding and
 * its offer/connect life cycle in one place. The codes stay closed on the device: they are the {@code TRANSPORT_*}
 * constants of {@code gda4j/layout/view.cuh}, on which {@code gda4j/detail/dispatch.cuh} branches, compiled into
 * the PTX; a new transport adds its code there too (docs/ARCHITECTURE.md, "Transports").
 */
package io.gda4j.transport;
