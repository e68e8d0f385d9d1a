package io.gda4j.nic.emulated;

import io.gda4j.nic.QpSpec;

/**
 * Where the emulated NIC gets ring memory and executors: {@link CudaPlatform} on a GPU machine; CPU tests supply one
 * over host memory, so decoding, validation, faults and completions are tested without CUDA.
 */
public interface EmulatedPlatform extends AutoCloseable {
    /** Ring memory of {@code sizeBytes} that the GPU of {@code spec} can address, zeroed. */
    RingMemory allocateRings(QpSpec spec, long sizeBytes);

    /** An executor for one QP posted from {@code spec.gpu()}, whose CQEs lie in {@code rings}. */
    QpExecutor createExecutor(QpSpec spec, RingMemory rings);

    /**
     * GPU memory of {@code sizeBytes} for a QP's rings ({@code RingPlacement.GPU}), zeroed. Throws
     * {@link UnsupportedOperationException} where {@link #deviceRingsUnsupportedReason()} says why not.
     */
    default DeviceRingMemory allocateDeviceRings(QpSpec spec, long sizeBytes) {
        throw new UnsupportedOperationException(deviceRingsUnsupportedReason().orElse("no device rings"));
    }

    /**
     * An executor for a QP whose CQ lies in {@code deviceRings} (its mirror in {@code rings}): a CQE's body goes from
     * the mirror to the GPU before its tail, both behind the work queued before.
     */
    default QpExecutor createExecutor(QpSpec spec, RingMemory rings, DeviceRingMemory deviceRings) {
        throw new UnsupportedOperationException(deviceRingsUnsupportedReason().orElse("no device rings"));
    }

    /** Why QP rings cannot live in GPU memory on this platform, or empty when they can. */
    default java.util.Optional<String> deviceRingsUnsupportedReason() {
        return java.util.Optional.of("this platform keeps QP rings in host memory only");
    }

    /**
     * Prepares the "wire" between two QPs' GPUs (CUDA peer access, so copies and atomics can reach the peer's
     * memory directly). Never throws; returns why the path is degraded, or null when it is direct.
     */
    String connect(QpSpec local, QpSpec remote);

    /** One line for {@code gda4j info}. */
    String describe();

    @Override
    default void close() {
    }
}
