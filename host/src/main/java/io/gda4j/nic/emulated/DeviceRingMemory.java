package io.gda4j.nic.emulated;

import java.nio.ByteBuffer;

/**
 * A QP's rings in GPU memory ({@code RingPlacement.GPU}): the send queue, the CQ and the two doorbell records, laid
 * out at the same offsets as in the QP's host {@link RingMemory}, which then holds the engine's mirror of them. The
 * GPU posts and polls here; the engine, which cannot load GPU memory, copies what it needs: the doorbell record and
 * the WQEs a doorbell covers into the mirror, the CQ's consumer index when its mirror says the CQ is full, and each
 * CQE out through its QP's executor (the body, then the tail).
 */
public interface DeviceRingMemory extends AutoCloseable {
    /** The rings' GPU address. */
    long deviceAddress();

    long sizeBytes();

    /** Copies {@code [offset, offset + bytes)} into {@code mirror} at the same offset; returns when it is there. */
    void copyToHost(long offset, long bytes, ByteBuffer mirror);

    /** Copies {@code [offset, offset + bytes)} of {@code mirror} here at the same offset; returns when it is there. */
    void copyFromHost(long offset, long bytes, ByteBuffer mirror);

    /** Frees the memory; idempotent. */
    @Override
    void close();
}
