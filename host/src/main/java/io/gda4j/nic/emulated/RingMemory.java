package io.gda4j.nic.emulated;

import java.nio.ByteBuffer;

/**
 * Memory for a QP's rings that both the engine thread (through {@link #buffer()}) and the GPU (at
 * {@link #deviceAddress()}) reach: mapped pinned host memory on a GPU machine, plain host memory in CPU tests.
 * Zeroed at allocation, 64-byte aligned.
 */
public interface RingMemory extends AutoCloseable {
    /** Address for this process's threads. */
    long hostAddress();

    /** Address for the GPU (equal to the host address under unified addressing). */
    long deviceAddress();

    /** A native-order view of the whole region. */
    ByteBuffer buffer();

    long sizeBytes();

    /** Frees the memory; idempotent. */
    @Override
    void close();
}
