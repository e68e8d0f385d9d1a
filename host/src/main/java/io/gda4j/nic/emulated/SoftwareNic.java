package io.gda4j.nic.emulated;

import io.gda4j.nic.NicMemory;
import io.gda4j.nic.NicQp;
import io.gda4j.nic.QpSpec;

/**
 * What the emulated NIC offers beyond {@link io.gda4j.nic.Nic}: QPs to ranks of other processes of this host through
 * mapped memory (where a real NIC connects by RC endpoint), the lock line that keeps its atomics atomic across those
 * processes, and its engine's counters. Code outside the NIC packages reaches it with
 * {@code nic.facet(SoftwareNic.class)}, never by a cast to the implementation.
 */
public interface SoftwareNic {
    /**
     * The atomic lock line of {@link #serializeAtomics}, in zeroed GPU memory: the lock word at 0 (0 free, 1 held),
     * at {@link #ATOMIC_LOCK_BROKEN_OFFSET} the count of locks taken by force after a holder never released (see
     * {@code kernels/emulated_nic.cu}).
     */
    int ATOMIC_LOCK_BYTES = 16;
    int ATOMIC_LOCK_BROKEN_OFFSET = 8;

    /**
     * A QP connected to {@code responder}, a rank of another process of this host (see {@link RemoteResponder}); it
     * is in RTS at once. Closing the QP does not close the responder.
     */
    NicQp createQpToProcess(QpSpec spec, RemoteResponder responder);

    /**
     * Makes strict atomics on {@code region} (registered here) take {@code lockAddress}, an 8-byte-aligned word of
     * zeroed GPU memory that other processes' emulated NICs map by CUDA IPC and take too before their atomics on the
     * region (their {@link RemoteResponder} entry names the same word). Call before any QP can name the region.
     */
    void serializeAtomics(NicMemory region, long lockAddress);

    /** Engine counters since the NIC was opened. */
    EngineStats stats();

    /**
     * Why the emulated NIC cannot reach a rank of another host, {@code peerDescription}: its wire is the peer's heap
     * mapped by CUDA IPC, so it models a NIC inside one machine, and reaches a rank of another host only where that
     * host is a name given to a process of this machine (GDA4J_HOST_NAME, for tests) with a heap handle and a GPU
     * linked to this one with atomics.
     */
    static String otherMachineReason(String peerDescription) {
        return "the emulated NIC models a NIC inside one machine (it reaches a peer's heap by CUDA IPC), and "
                + peerDescription + " runs on another machine, or exported no heap, or its GPU's link to this one"
                + " carries no atomics: between machines use a real NIC (--nic mlx5)";
    }
}
