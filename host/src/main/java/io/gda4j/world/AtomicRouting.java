package io.gda4j.world;

import io.gda4j.transport.Capability;
import io.gda4j.transport.PeerLink;
import io.gda4j.transport.Transport;
import io.gda4j.transport.TransportProvider;

import java.util.List;

/**
 * One path for the atomics on a word (NVSHMEM's rule). A NIC's atomic reaches GPU memory as a read and a write across
 * PCIe, so it is not atomic with a GPU atomic on the same word (ConnectX atomics are atomic only with other atomics
 * of the same NIC): a counter that IBGDA peers add to and that the GPU also adds to loses updates. So a rank with
 * IBGDA links, whose words its IBGDA peers may add to, takes ADDs only through a NIC:
 * <ul>
 *   <li>its own SIGNAL_ADD / atomic_add / put_signal ADD to itself go through its loopback QP (an ATOMIC_FA on its
 *       own NIC): its SELF peer entry's handle is that QP's {@code DeviceQp} with {@link #PEER_NIC_ATOMICS} set;</li>
 *   <li>an ADD to it from a p2p or proxy peer (both add with GPU atomics) is refused on the device with
 *       {@code ERROR_MIXED_ATOMICS}: those peer entries carry {@link #PEER_NIC_ATOMICS} too. Puts and SET signals
 *       are plain writes and go as before;</li>
 *   <li>a kernel's own GPU atomics on such words (atomicAdd, red.add) break the rule and may lose updates; the
 *       device API cannot see them.</li>
 * </ul>
 * A world whose ranks have no IBGDA links keeps GPU atomics everywhere and its entries unchanged.
 * {@code gda4j/layout/view.cuh} holds the same constants; the device side is {@code gda4j/detail/dispatch.cuh}.
 */
public final class AtomicRouting {
    /** {@code PeerEntry.handle} bit: the peer's words receive NIC atomics, so ADDs to it go through a NIC. */
    public static final long PEER_NIC_ATOMICS = 2;
    /** The flag bits of {@code PeerEntry.handle} ({@code P2P_NO_NATIVE_ATOMICS}, {@link #PEER_NIC_ATOMICS}). */
    public static final long PEER_HANDLE_FLAGS = 3;

    private AtomicRouting() {
    }

    /**
     * The handle of a peer entry of {@code transport} whose target rank's own ADDs go through the loopback
     * {@code DeviceQp} at {@code targetLoopbackQp} (0: the target takes no NIC atomics, nothing changes).
     */
    public static long routedHandle(Transport transport, long handle, long targetLoopbackQp) {
        if (targetLoopbackQp == 0) {
            return handle;
        }
        if ((targetLoopbackQp & PEER_HANDLE_FLAGS) != 0) {
            throw new IllegalStateException(String.format("loopback DeviceQp at 0x%x is not aligned: its low bits"
                    + " are the peer entry's flags", targetLoopbackQp));
        }
        return transport == Transport.SELF ? targetLoopbackQp | PEER_NIC_ATOMICS : routedToNicAtomics(transport, handle);
    }

    /**
     * The handle of a peer entry of {@code transport} whose target's words take ADDs only through a NIC: a
     * transport whose adds are GPU atomics ({@link Capability#GPU_ATOMICS}: p2p's red.add.sys, the proxy's
     * atomic kernel) is refused them on the device; one whose adds are NIC atomics already (ibgda), or NONE, which
     * reaches nothing, keeps its handle.
     */
    static long routedToNicAtomics(Transport transport, long handle) {
        return transport.has(Capability.GPU_ATOMICS) ? handle | PEER_NIC_ATOMICS : handle;
    }

    /**
     * The rule for the one rank of a process ({@link ProcessWorld}), once its links are connected: its SELF entry
     * takes {@code ownLoopback} (0: it takes no NIC atomics), and its GPU-atomic entries toward ranks whose process
     * said they take ADDs only through a NIC ({@code nicAtomics}, from {@link TransportOffers}) are refused ADDs.
     */
    static void applyAcrossProcesses(Rank local, long ownLoopback, boolean[] nicAtomics) {
        for (int q = 0; q < nicAtomics.length; q++) {
            PeerLink link = local.link(q);
            if (link == null) {
                continue;
            }
            long handle = q == local.rank() ? routedHandle(link.transport(), link.handle(), ownLoopback)
                    : nicAtomics[q] ? routedToNicAtomics(link.transport(), link.handle()) : link.handle();
            if (handle != link.handle()) {
                local.setLink(q, new PeerLink(link.transport(), link.peerHeap(), handle, link.rkey(), link.lkey(),
                        link.peerAbortFlag(), link.resources()));
            }
        }
    }

    /**
     * Applies the rule to every link of {@code ranks} (all connected): asks each provider for the rank's loopback QP
     * ({@link TransportProvider#loopbackAtomicsQp}) and rewrites the SELF, p2p and proxy entries that point at a rank
     * that has one. Call before the device views are written.
     */
    static void apply(List<Rank> ranks, List<TransportProvider> providers) {
        long[] loopback = new long[ranks.size()];
        for (Rank r : ranks) {
            for (TransportProvider p : providers) {
                long qp = p.loopbackAtomicsQp(r);
                if (qp != 0) {
                    loopback[r.rank()] = qp;
                    break;
                }
            }
        }
        for (Rank r : ranks) {
            for (Rank q : ranks) {
                PeerLink link = r.link(q.rank());
                if (link == null) {
                    continue;
                }
                long handle = routedHandle(link.transport(), link.handle(), loopback[q.rank()]);
                if (handle != link.handle()) {
                    r.setLink(q.rank(), new PeerLink(link.transport(), link.peerHeap(), handle, link.rkey(), link.lkey(),
                            link.peerAbortFlag(), link.resources()));
                }
            }
        }
    }
}
