package io.gda4j.transport;

import java.util.Optional;

/**
 * What a transport fills into one {@code PeerEntry} of a rank's device view, plus whatever native resources the
 * link owns (QPs, FIFOs); closing the link releases them.
 *
 * @param transport      the transport, whose code and capabilities the entry carries
 * @param peerHeap       a {@link Capability#DIRECT} peer's heap base as the local GPU addresses it; 0 otherwise
 * @param handle         the transport's object for the peer (a device QP, a proxy channel), with flag bits; 0 if none
 * @param rkey           remote key of the peer's heap, where the transport uses one
 * @param lkey           local key of this rank's heap, where the transport uses one
 * @param peerAbortFlag  address of the peer's abort word as the local GPU addresses it, or 0 when not mapped
 * @param resources      released by {@link #close()}; may be null
 */
public record PeerLink(Transport transport, long peerHeap, long handle, int rkey, int lkey, long peerAbortFlag,
                       AutoCloseable resources) implements AutoCloseable {

    /**
     * The transfers the host can queue toward the peer's heap itself, where the link's resources offer them (a
     * transport with {@link Capability#HOST_TRANSFERS}), or empty.
     */
    public Optional<HostTransfers> hostTransfers() {
        return resources instanceof HostTransfers t ? Optional.of(t) : Optional.empty();
    }

    /** What {@code resources} report as wrong (see {@link LinkHealth}), or empty. */
    public Optional<String> problem() {
        return resources instanceof LinkHealth ? ((LinkHealth) resources).problem() : Optional.empty();
    }

    @Override
    public void close() {
        if (resources != null) {
            try {
                resources.close();
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException("closing the " + transport + " link failed: " + e.getMessage(), e);
            }
        }
    }
}
