package io.gda4j.verbs;

import com.sun.jna.Pointer;

import java.nio.ByteBuffer;

/**
 * Where an mlx5 CQ lives ({@code struct mlx5dv_cq}, field names kept): the CQE ring that
 * {@code io.gda4j.mlx5.CqeDecoder} polls, and the doorbell record whose first word takes the consumer index.
 *
 * @param buf      CQE ring
 * @param dbrec    CQ doorbell record ({@code __be32[2]}: consumer index, arm)
 * @param cqeCnt   CQEs in the ring (a power of two)
 * @param cqeSize  bytes per CQE (64 or 128; gda4j's decoder handles 64)
 * @param cqUar    the CQ's UAR page (arming)
 * @param cqn      CQ number
 */
public record Mlx5CqBuffers(long buf, long dbrec, int cqeCnt, int cqeSize, long cqUar, int cqn) {

    /** The CQE ring as a buffer for {@code io.gda4j.mlx5.CqeDecoder}. */
    public ByteBuffer cqeRing() {
        return new Pointer(buf).getByteBuffer(0, (long) cqeCnt * cqeSize);
    }

    static Mlx5CqBuffers read(Pointer dv) {
        return new Mlx5CqBuffers(dv.getLong(Mlx5dvCqDescriptor.BUF_OFFSET),
                dv.getLong(Mlx5dvCqDescriptor.DBREC_OFFSET),
                dv.getInt(Mlx5dvCqDescriptor.CQE_CNT_OFFSET),
                dv.getInt(Mlx5dvCqDescriptor.CQE_SIZE_OFFSET),
                dv.getLong(Mlx5dvCqDescriptor.CQ_UAR_OFFSET),
                dv.getInt(Mlx5dvCqDescriptor.CQN_OFFSET));
    }
}
