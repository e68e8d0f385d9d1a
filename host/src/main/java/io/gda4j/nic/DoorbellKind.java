package io.gda4j.nic;

/**
 * What the doorbell register of a QP is, which decides the store that rings it ({@code gda4j/ibgda.cuh}
 * {@code ring_doorbell}).
 */
public enum DoorbellKind {
    /**
     * A UAR/BlueFlame register of a real NIC mapped into the GPU ({@code cuMemHostRegister(IOMEMORY)}): rung with
     * one 8-byte {@code st.mmio.relaxed.sys} after a {@code fence.sc.sys}, which orders it after the doorbell record.
     */
    MMIO(0),
    /**
     * An ordinary 8-byte word in pinned host memory (the emulated NIC's doorbell page): rung with
     * {@code st.release.sys}, which orders it after the doorbell record for the engine thread's acquire load. The
     * engine polls the doorbell record, so the doorbell word only counts rings.
     */
    MEMORY(1);

    private final int code;

    DoorbellKind(int code) {
        this.code = code;
    }

    /** The value in {@code DeviceQp.flags} (bit {@code FLAG_DOORBELL_MEMORY}). */
    public int code() {
        return code;
    }
}
