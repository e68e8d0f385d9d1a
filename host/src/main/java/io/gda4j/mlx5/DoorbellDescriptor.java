package io.gda4j.mlx5;

import java.nio.ByteBuffer;

/**
 * The 8-byte doorbell written to the UAR (BlueFlame) register to make the NIC fetch new WQEs.
 *
 * <pre>{@code
 * byte:   0               1               2               3
 *         +---------------+---------------+---------------+---------------+
 *       0 |       0       |        producer index (16)    |       0       |  BE32(pi << 8)
 *       4 |                    qpn (24)                   |       0       |  BE32(qpn << 8)
 *         +---------------+---------------+---------------+---------------+
 * }</pre>
 * These are the first 8 bytes of a ctrl segment with opmod, opcode and ds zero ({@code mlx5dv_set_ctrl_seg} with
 * {@code pi}, {@code qp_num}); rdma-core rings with the first 8 bytes of the last WQE's ctrl segment, which the NIC
 * reads the same way. It must be written as one 8-byte store, after the doorbell record.
 *
 * <p>The emulated NIC acts on this word alone (a stand-in page in mapped memory that the GPU rings with the same
 * {@code st.mmio.relaxed.sys} as a UAR): {@link #getDoorbellAcquire} pairs with {@link #putDoorbellRelease} or the
 * GPU's {@code fence.sc.sys} before its MMIO store, and {@link #producerIndex} / {@link #qpn} read it back.
 */
public final class DoorbellDescriptor {
    public static final int SIZE = 8;
    public static final int PRODUCER_INDEX_OFFSET = 0;
    public static final int QPN_OFFSET = 4;

    private DoorbellDescriptor() {
    }

    /** The doorbell as a long whose big-endian bytes are {@code {BE32(pi << 8), BE32(qpn << 8)}}. */
    public static long doorbellBigEndian(long pi, int qpn) {
        long high = (long) WqeDescriptor.opmodIdxOpcode(0, pi, 0) & 0xffffffffL;
        long low = (long) WqeDescriptor.qpnDs(qpn & WqeDescriptor.QPN_MASK, 0) & 0xffffffffL;
        return (high << 32) | low;
    }

    /** The producer index (16 bits) a doorbell value names. */
    public static int producerIndex(long doorbellBigEndian) {
        return (int) (doorbellBigEndian >>> (32 + WqeDescriptor.WQE_INDEX_SHIFT)) & WqeDescriptor.WQE_INDEX_MASK;
    }

    /** The QP number (24 bits) a doorbell value names. */
    public static int qpn(long doorbellBigEndian) {
        return (int) (doorbellBigEndian >>> WqeDescriptor.QPN_SHIFT) & WqeDescriptor.QPN_MASK;
    }

    /** Reads the doorbell with one 8-byte acquire load; pairs with {@link #putDoorbellRelease} (or the GPU's fence). */
    public static long getDoorbellAcquire(ByteBuffer register, int offset) {
        return BigEndian.getLongAcquire(register, offset);
    }

    /** Writes the doorbell with one 8-byte release store (the register or a test buffer must be 8-byte aligned). */
    public static void putDoorbellRelease(ByteBuffer register, int offset, long pi, int qpn) {
        BigEndian.putLongRelease(register, offset, doorbellBigEndian(pi, qpn));
    }
}
