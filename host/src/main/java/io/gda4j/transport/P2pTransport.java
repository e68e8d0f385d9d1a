package io.gda4j.transport;

import io.gda4j.cuda.CudaDevice;
import io.gda4j.world.Rank;

import java.util.Optional;

/**
 * Same-host direct loads and stores: the peer's heap is mapped into the local GPU's address space by CUDA peer
 * access (unified addressing makes the peer's device pointer valid here once access is enabled). Two ranks on
 * one GPU share its context and need nothing enabled.
 */
public final class P2pTransport implements TransportProvider {
    public static final String NAME = "p2p";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public TransportTag tag() {
        return TransportTag.P2P;
    }

    @Override
    public int autoPreference() {
        return 0;
    }

    @Override
    public Optional<String> unavailableReason(Rank local, Rank peer) {
        CudaDevice a = local.device();
        CudaDevice b = peer.device();
        if (a.ordinal() == b.ordinal()) {
            return Optional.empty();
        }
        try {
            if (!a.canAccessPeer(b)) {
                return Optional.of("GPU " + a.ordinal() + " cannot access GPU " + b.ordinal()
                        + " directly (no NVLink or PCIe peer path; cuDeviceCanAccessPeer says no)");
            }
        } catch (RuntimeException e) {
            return Optional.of("peer access query between GPU " + a.ordinal() + " and GPU " + b.ordinal()
                    + " failed: " + e.getMessage());
        }
        return Optional.empty();
    }

    @Override
    public PeerLink connect(Rank local, Rank peer) {
        if (local.device().ordinal() != peer.device().ordinal()) {
            local.context().enablePeerAccess(peer.context());
        }
        return new PeerLink(TransportTag.P2P, peer.heapBase(), 0, 0, 0, peer.abortFlagAddress(), null);
    }
}
