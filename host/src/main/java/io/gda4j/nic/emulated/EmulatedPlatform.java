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
