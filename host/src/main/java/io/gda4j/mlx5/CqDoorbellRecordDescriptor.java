package io.gda4j.mlx5;

import java.nio.ByteBuffer;

/**
 * The 8-byte doorbell record of a CQ: where the consumer publishes how many CQEs it has taken.
 *
 * <pre>{@code
 * byte:   0               1               2               3
 *         +---------------+---------------+---------------+---------------+
 *       0 |       0       |      consumer index & 0xffffff (BE)           |  MLX5_CQ_SET_CI
 *       4 |                 arm word (BE32), MLX5_CQ_ARM_DB               |
 *         +---------------+---------------+---------------+---------------+
 * }</pre>
 * rdma-core's mlx5 provider writes {@code dbrec[MLX5_CQ_SET_CI] = htobe32(cons_index & 0xffffff)} after polling.
 * A real NIC uses it to detect CQ overrun; the emulated NIC reads it to check the same thing.
 */
public final class CqDoorbellRecordDescriptor {
    public static final int SIZE = 8;
    /** Index of the consumer index word ({@code MLX5_CQ_SET_CI}). */
    public static final int SET_CI = 0;
    /** Index of the arm word ({@code MLX5_CQ_ARM_DB}); gda4j polls and never arms. */
    public static final int ARM_DB = 1;
    public static final int CONSUMER_INDEX_OFFSET = SET_CI * Integer.BYTES;
    public static final int ARM_OFFSET = ARM_DB * Integer.BYTES;
    public static final int CONSUMER_INDEX_MASK = 0xffffff;

    private CqDoorbellRecordDescriptor() {
    }

    /** Publishes consumer counter {@code ci}; pairs with {@link #getConsumerIndexAcquire} (or the NIC's read). */
    public static void putConsumerIndexRelease(ByteBuffer dbr, int dbrOffset, long ci) {
        BigEndian.putIntRelease(dbr, dbrOffset + CONSUMER_INDEX_OFFSET, (int) (ci & CONSUMER_INDEX_MASK));
    }

    /** The published consumer index (24 bits); pairs with {@link #putConsumerIndexRelease} or a device release. */
    public static int getConsumerIndexAcquire(ByteBuffer dbr, int dbrOffset) {
        return BigEndian.getIntAcquire(dbr, dbrOffset + CONSUMER_INDEX_OFFSET) & CONSUMER_INDEX_MASK;
    }
}
