package io.gda4j.nic;

/**
 * What the doorbell register of a QP is. A GPU rings both the same way ({@code gda4j/transport/ibgda/qp.cuh}
 * {@code ring}: a {@code fence.sc.sys}, then one 8-byte {@code st.mmio.relaxed.sys}), so the real NIC's store is the
 * one the emulated NIC's tests execute. The host rings a MEMORY doorbell itself ({@link RingPoster}) and an MMIO one
 * through libibverbs ({@link NicQp#hostPoster()}).
 */
public enum DoorbellKind {
    /** A UAR/BlueFlame register of a real NIC mapped into the GPU ({@code cuMemHostRegister(IOMEMORY)}). */
    MMIO,
    /**
     * The emulated NIC's stand-in for the UAR: an 8-byte word on its own line of pinned host memory mapped into the
     * GPU. The engine acts on this word alone (never on the doorbell record by itself) and checks it.
     */
    MEMORY
}
