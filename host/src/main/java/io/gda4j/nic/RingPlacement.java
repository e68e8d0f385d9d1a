package io.gda4j.nic;

import java.util.Locale;

/**
 * Where a QP's send queue, doorbell record and CQ live ({@code GDA4J_IBGDA_RINGS}). The doorbell register is the
 * NIC's either way (a UAR page, or the emulated NIC's stand-in word).
 */
public enum RingPlacement {
    /**
     * Host memory mapped into the GPU's address space: every WQE and doorbell record the kernel writes and every CQE
     * it polls crosses PCIe. What every NIC offers; the fallback.
     */
    HOST,
    /**
     * GPU memory the NIC reaches by GPUDirect (NVSHMEM's default): the kernel's WQE writes and CQE polls stay in its
     * own memory, and the NIC reads and writes them across PCIe instead. Where {@link Nic#gpuRingsUnsupportedReason}
     * is empty.
     */
    GPU;

    /** {@code host} or {@code gpu}, any case. */
    public static RingPlacement parse(String text) {
        try {
            return valueOf(text.strip().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("unknown ring placement '" + text + "': choose host or gpu", e);
        }
    }

    /** The word a user types: {@code host}, {@code gpu}. */
    public String word() {
        return name().toLowerCase(Locale.ROOT);
    }
}
