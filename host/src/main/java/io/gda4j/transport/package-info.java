/**
 * The transports, below the world: the closed table of them ({@link io.gda4j.transport.Transport}, with their
 * {@link io.gda4j.transport.Capability capabilities}), the SPI a {@link io.gda4j.transport.TransportProvider} (found
 * through {@link java.util.ServiceLoader}) implements, the choice among the providers
 * ({@link io.gda4j.transport.Transports}, {@link io.gda4j.transport.TransportChoice}) and the offers ranks of
 * different processes exchange ({@link io.gda4j.transport.TransportOffers}). A provider is handed
 * {@link io.gda4j.transport.LinkEnd}s and {@link io.gda4j.transport.RemotePeer}s and makes
 * {@link io.gda4j.transport.PeerLink}s, whose resources may report problems through
 * {@link io.gda4j.transport.LinkHealth}. The package names no type of the world.
 *
 * <h2>The table</h2>
 * {@code gda4j/transports.def} (device-ptx) lists every transport once, with its code, phrase, capability bits and
 * device view flag; the device headers read it as X-macros and {@link io.gda4j.transport.Transport} mirrors it row
 * by row ({@code TransportTableTest} checks the two). The world's {@code NONE} and {@code SELF} are rows of it; every
 * other row belongs to one provider, in the package of the row's name. Code outside that package asks a row's
 * capabilities, never which row it is, so a provider owns its device code, its settings, its error decoding and its
 * offer/connect life cycle in one place (docs/ARCHITECTURE.md, "Transports" and "Adding a transport").
 */
package io.gda4j.transport;
