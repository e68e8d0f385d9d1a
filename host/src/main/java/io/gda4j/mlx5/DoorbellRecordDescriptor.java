package io.gda4j.mlx5;

import java.nio.ByteBuffer;

/**
 * The 8-byte doorbell record of a QP: where software publishes how far it has written the queues. The NIC (or the
 * emulated NIC) reads it after a doorbell.
 *
 * <pre>{@code
 * byte:   0               1               2               3
 *         +---------------+---------------+---------------+---------------+
 *       0 |                 receive counter (BE32), MLX5_RCV_DBR           |
 *       4 |      0        |       0       |   send counter & 0xffff (BE)  |  MLX5_SND_DBR
 *         +---------------+---------------+---------------+---------------+
 * }</pre>
 * The send counter is the producer index in WQEBBs (the counter after the last WQE written), modulo 2^16:
 * {@code dbrec[MLX5_SND_DBR] = htobe32(pi & 0xffff)}, as rdma-core's mlx5 provider writes it.
 */
public final class DoorbellRecordDescriptor {
    public static final int SIZE = 8;
    /** Index of the receive counter word ({@code MLX5_RCV_DBR}). */
    public static final int RCV_DBR = 0;
    /** Index of the send counter word ({@code MLX5_SND_DBR}). */
    public static final int SND_DBR = 1;
    public static final int RECEIVE_COUNTER_OFFSET = RCV_DBR * Integer.BYTES;
    public static final int SEND_COUNTER_OFFSET = SND_DBR * Integer.BYTES;
    public static final int COUNTER_MASK = 0xffff;

    private DoorbellRecordDescriptor() {
    }

    /** The send counter word for producer index {@code pi} as a host int (stored big-endian). */
    public static int sendCounter(long pi) {
        return (int) (pi & COUNTER_MASK);
    }

    /**
     * Publishes producer index {@code pi}: a release store, so the WQEs written before it are visible first. The NIC
     * reads it after the doorbell write, which must follow this store; the emulated NIC's engine reads it
     * ({@link #getSendCounterAcquire}) after each new doorbell and fails the QP if it does not cover the doorbell.
     */
    public static void putSendCounterRelease(ByteBuffer dbr, int dbrOffset, long pi) {
        BigEndian.putIntRelease(dbr, dbrOffset + SEND_COUNTER_OFFSET, sendCounter(pi));
    }

    /** Reads the published send counter (16 bits); pairs with {@link #putSendCounterRelease} or a device release. */
    public static int getSendCounterAcquire(ByteBuffer dbr, int dbrOffset) {
        return BigEndian.getIntAcquire(dbr, dbrOffset + SEND_COUNTER_OFFSET) & COUNTER_MASK;
    }
}
