package io.gda4j.p2p;

import io.gda4j.cuda.CudaDevice;
import io.gda4j.transport.LinkEnd;
import io.gda4j.transport.PeerLink;
import io.gda4j.transport.RemotePeer;
import io.gda4j.transport.Transport;
import io.gda4j.transport.TransportProvider;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Same-host direct loads and stores: the peer's heap is mapped into the local GPU's address space by CUDA peer
 * access (unified addressing makes the peer's device pointer valid here once access is enabled). Two ranks on
 * one GPU share its context and need nothing enabled.
 *
 * <p>Atomics: over a link without native peer atomics ({@code CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED} false,
 * PCIe) a {@code red.add.sys} to the peer's memory is a read and a write, not atomic. Such a pair is still served
 * (puts, SET signals, waits), but its peer entry carries {@link #NO_NATIVE_ATOMICS}, and the device refuses ADDs to it
 * ({@code SIGNAL_ADD}, {@code atomic_add}: {@code ERROR_NO_NATIVE_ATOMICS}) instead of losing updates.
 */
public final class P2pTransport implements TransportProvider {
    /** {@code PeerEntry.handle} bit of a P2P peer whose link has no native atomics ({@code P2P_NO_NATIVE_ATOMICS}). */
    public static final long NO_NATIVE_ATOMICS = 1;

    /** {@link Transport#P2P}: the device stores straight into the peer's heap; its ADDs are GPU atomics. */
    @Override
    public Transport transport() {
        return Transport.P2P;
    }

    @Override
    public int autoPreference() {
        return 0;
    }

    /** The GPU pairs of this machine with peer access both ways. */
    @Override
    public String possibleHere(List<CudaDevice> gpus) {
        List<String> pairs = new ArrayList<>();
        for (CudaDevice a : gpus) {
            for (CudaDevice b : gpus) {
                if (a.ordinal() < b.ordinal() && a.canAccessPeer(b) && b.canAccessPeer(a)) {
                    pairs.add(a.ordinal() + "<->" + b.ordinal());
                }
            }
        }
        if (gpus.size() < 2) {
            return "possible only between ranks sharing the one GPU (a second GPU is needed for GPU-to-GPU runs)";
        }
        return pairs.isEmpty() ? "not possible: no GPU pair has peer access" : "possible between GPUs " + String.join(", ", pairs);
    }

    @Override
    public Optional<String> unavailableReason(LinkEnd local, LinkEnd peer) {
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
    public PeerLink connect(LinkEnd local, LinkEnd peer) {
        boolean sameGpu = local.device().ordinal() == peer.device().ordinal();
        if (!sameGpu) {
            local.context().enablePeerAccess(peer.context());
        }
        long flags = handleFlags(sameGpu, sameGpu || local.device().nativeAtomicsWith(peer.device()));
        return new PeerLink(Transport.P2P, peer.heapBase(), flags, 0, 0, peer.abortFlagAddress(), null);
    }

    /**
     * Across processes of one host the peer heap is mapped by CUDA IPC already; stores to it need nothing more. A
     * peer on another host has no heap here to store into.
     */
    @Override
    public Optional<String> unavailableAcrossProcesses(LinkEnd local, RemotePeer peer) {
        if (!peer.sameHost()) {
            return Optional.of(peer.description() + " runs on another host: p2p stores need its heap mapped into this"
                    + " GPU, which only processes of one host can do");
        }
        return Optional.empty();
    }

    /**
     * The peer's heap as the world mapped it. The peer's abort word is pinned host memory of its process and cannot
     * be mapped here: its kernels learn of a failure here from their own timeout, or from the bootstrap when this
     * process dies.
     */
    @Override
    public PeerLink connectAcrossProcesses(LinkEnd local, RemotePeer peer) {
        return new PeerLink(Transport.P2P, peer.heapAddress(), handleFlags(peer.sameGpu(), peer.nativeAtomics()), 0,
                0, 0, null);
    }

    /** The peer entry's flag bits: {@link #NO_NATIVE_ATOMICS} for two GPUs whose link carries no atomics. */
    static long handleFlags(boolean sameGpu, boolean nativeAtomics) {
        return sameGpu || nativeAtomics ? 0 : NO_NATIVE_ATOMICS;
    }
}
