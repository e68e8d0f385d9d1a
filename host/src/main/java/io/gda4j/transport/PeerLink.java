package io.gda4j.transport;

import java.util.Optional;

/**
 * What a transport fills into one {@code PeerEntry} of a rank's device view, plus whatever native resources the
 * link owns (QPs, FIFOs); closing the link releases them.
 *
 * @param tag            the transport
 * @param peerHeap       P2P/SELF: the peer's heap base as the local GPU addresses it; 0 otherwise
 * @param handle         IBGDA: device QP address; PROXY: channel address; 0 otherwise
 * @param rkey           remote key of the peer's heap (IBGDA)
 * @param lkey           local key of this rank's heap (IBGDA)
 * @param peerAbortFlag  address of the peer's abort word as the local GPU addresses it, or 0 when not mapped
 * @param resources      released by {@link #close()}; may be null
 */
public record PeerLink(TransportTag tag, long peerHeap, long handle, int rkey, int lkey, long peerAbortFlag,
                       AutoCloseable resources) implements AutoCloseable {

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
                throw new IllegalStateException("closing the " + tag + " link failed: " + e.getMessage(), e);
            }
        }
    }
}
