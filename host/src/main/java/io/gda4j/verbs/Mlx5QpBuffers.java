package io.gda4j.verbs;

import com.sun.jna.Pointer;

import java.nio.ByteBuffer;

/**
 * Where an mlx5 QP's queues and doorbells live ({@code struct mlx5dv_qp}, field names kept): what the GPU (or a
 * host poster) needs to write WQEs with {@code io.gda4j.mlx5.WqeEncoder} and ring the NIC.
 *
 * @param dbrec    doorbell record, 8 bytes ({@code io.gda4j.mlx5.DoorbellRecordDescriptor})
 * @param sqBuf    send queue ring
 * @param sqWqeCnt send queue size in WQEBBs (a power of two)
 * @param sqStride bytes per WQEBB (64)
 * @param rqBuf    receive queue ring
 * @param rqWqeCnt receive queue entries
 * @param rqStride bytes per receive entry
 * @param bfReg    UAR / BlueFlame register: the 8-byte doorbell ({@code io.gda4j.mlx5.DoorbellDescriptor}) goes here
 * @param bfSize   BlueFlame buffer size (0: no BlueFlame, doorbells still go to {@code bfReg})
 */
public record Mlx5QpBuffers(long dbrec, long sqBuf, int sqWqeCnt, int sqStride, long rqBuf, int rqWqeCnt,
                            int rqStride, long bfReg, int bfSize) {

    /** The send queue ring as a buffer for {@code io.gda4j.mlx5.WqeEncoder}. */
    public ByteBuffer sendQueue() {
        return new Pointer(sqBuf).getByteBuffer(0, (long) sqWqeCnt * sqStride);
    }

    /** The doorbell record as an 8-byte buffer. */
    public ByteBuffer doorbellRecord() {
        return new Pointer(dbrec).getByteBuffer(0, 8);
    }

    static Mlx5QpBuffers read(Pointer dv) {
        return new Mlx5QpBuffers(dv.getLong(Mlx5dvQpDescriptor.DBREC_OFFSET),
                dv.getLong(Mlx5dvQpDescriptor.SQ_BUF_OFFSET),
                dv.getInt(Mlx5dvQpDescriptor.SQ_WQE_CNT_OFFSET),
                dv.getInt(Mlx5dvQpDescriptor.SQ_STRIDE_OFFSET),
                dv.getLong(Mlx5dvQpDescriptor.RQ_BUF_OFFSET),
                dv.getInt(Mlx5dvQpDescriptor.RQ_WQE_CNT_OFFSET),
                dv.getInt(Mlx5dvQpDescriptor.RQ_STRIDE_OFFSET),
                dv.getLong(Mlx5dvQpDescriptor.BF_REG_OFFSET),
                dv.getInt(Mlx5dvQpDescriptor.BF_SIZE_OFFSET));
    }
}
