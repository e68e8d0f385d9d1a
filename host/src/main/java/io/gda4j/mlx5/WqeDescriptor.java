package io.gda4j.mlx5;

import java.nio.ByteBuffer;

/**
 * Layout of an mlx5 send WQE: 16-byte segments, all big-endian, in a ring of 64-byte WQE basic blocks (WQEBBs).
 *
 * <p>A WQE starts at a WQEBB and occupies {@code ds} 16-byte segments, so {@code (ds + 3) / 4} WQEBBs. Its WQEBBs are
 * consecutive modulo the ring: a WQE that starts in the last slot continues at slot 0, so every segment address goes
 * through {@link #segmentOffset}. The ring is a power of two of WQEBBs and the WQE counter is free-running; the
 * ctrl segment carries its low 16 bits. Shapes written by {@link WqeEncoder} and accepted by {@link WqeDecoder}:
 * <pre>
 *   NOP                    ctrl                          ds 1, 1 WQEBB
 *   RDMA_WRITE[_IMM], READ ctrl | raddr | data           ds 3, 1 WQEBB
 *   RDMA_WRITE inline      ctrl | raddr | inline...      ds 2 + ceil((4 + len) / 16), up to 16 WQEBBs
 *   ATOMIC_FA, ATOMIC_CS   ctrl | raddr | atomic | data  ds 4, 1 WQEBB (the fetched value lands at data)
 * </pre>
 *
 * <pre>
 * byte:   0               1               2               3
 *         +---------------+---------------+---------------+---------------+
 * ctrl  0 |     opmod     |         wqe_index (16)        |    opcode     |  opmod_idx_opcode
 *       4 |                    qpn (24)                   |      ds       |  qpn_ds
 *       8 |   signature   |  dci_stream_channel_id (16)   |   fm_ce_se    |
 *      12 |                              imm                              |
 *         +---------------+---------------+---------------+---------------+
 * raddr 0 |                          raddr (64)                           |
 *       4 |                                                               |
 *       8 |                              rkey                             |
 *      12 |                            reserved                           |
 *         +---------------+---------------+---------------+---------------+
 * data  0 |                          byte_count                           |
 *       4 |                              lkey                             |
 *       8 |                           addr (64)                           |
 *      12 |                                                               |
 *         +---------------+---------------+---------------+---------------+
 * inline0 |1|                   byte_count (31)                           |  bit 31 = INLINE_SEG
 *       4 |  payload ... padded with zeros to a 16-byte boundary, may run  |
 *         |  on into the next segments and WQEBBs                          |
 *         +---------------+---------------+---------------+---------------+
 * atomic0 |                        swap_add (64)                          |
 *       4 |                                                               |
 *       8 |                        compare (64)                           |
 *      12 |                                                               |
 *         +---------------+---------------+---------------+---------------+
 * </pre>
 * The field names are those of rdma-core's {@code struct mlx5_wqe_*_seg} and of {@code gda4j/layout/mlx5.cuh}.
 */
public final class WqeDescriptor {
    /** Bytes in one WQE basic block ({@code MLX5_SEND_WQE_BB}). */
    public static final int WQEBB_SIZE = 64;
    /** log2 of {@link #WQEBB_SIZE} ({@code MLX5_SEND_WQE_SHIFT}). */
    public static final int WQEBB_SHIFT = 6;
    /** Bytes in one segment: the unit of {@code ds}. */
    public static final int SEGMENT_SIZE = 16;
    public static final int SEGMENTS_PER_WQEBB = WQEBB_SIZE / SEGMENT_SIZE;
    /** {@code ds} is a 6-bit field (the kernel's {@code MLX5_WQE_CTRL_DS_MASK}), so a WQE has at most 63 segments. */
    public static final int DS_MASK = 0x3f;
    public static final int MAX_DS = DS_MASK;
    /** WQEBBs of the largest WQE ({@link #MAX_DS} segments). */
    public static final int MAX_WQEBBS = (MAX_DS + SEGMENTS_PER_WQEBB - 1) / SEGMENTS_PER_WQEBB;

    // ctrl segment (struct mlx5_wqe_ctrl_seg)
    public static final int CTRL_SIZE = 16;
    public static final int CTRL_OPMOD_IDX_OPCODE_OFFSET = 0;
    public static final int CTRL_QPN_DS_OFFSET = 4;
    public static final int CTRL_SIGNATURE_OFFSET = 8;
    public static final int CTRL_DCI_STREAM_CHANNEL_ID_OFFSET = 9;
    public static final int CTRL_FM_CE_SE_OFFSET = 11;
    public static final int CTRL_IMM_OFFSET = 12;

    public static final int OPMOD_SHIFT = 24;
    public static final int WQE_INDEX_SHIFT = 8;
    /** The ctrl segment keeps the low 16 bits of the WQE counter. */
    public static final int WQE_INDEX_MASK = 0xffff;
    public static final int OPCODE_MASK = 0xff;
    public static final int QPN_SHIFT = 8;
    public static final int QPN_MASK = 0xffffff;

    // fm_ce_se bits (MLX5_WQE_CTRL_*)
    /** Solicited event at the responder (SEND only). */
    public static final int FM_CE_SE_SOLICITED = 0x02;
    /** Write a CQE when this WQE completes ({@code MLX5_WQE_CTRL_CQ_UPDATE}); unsignaled WQEs complete silently. */
    public static final int FM_CE_SE_CQ_UPDATE = 0x08;
    /** Initiator small fence: wait for earlier RDMA READs and atomics before this WQE. */
    public static final int FM_CE_SE_SMALL_FENCE = 0x20;
    /** Strong fence ({@code MLX5_WQE_CTRL_FENCE}): wait for every earlier WQE on the QP before this one. */
    public static final int FM_CE_SE_FENCE = 0x80;

    // raddr segment (struct mlx5_wqe_raddr_seg)
    public static final int RADDR_SIZE = 16;
    public static final int RADDR_RADDR_OFFSET = 0;
    public static final int RADDR_RKEY_OFFSET = 8;
    public static final int RADDR_RESERVED_OFFSET = 12;

    // data segment (struct mlx5_wqe_data_seg)
    public static final int DATA_SIZE = 16;
    public static final int DATA_BYTE_COUNT_OFFSET = 0;
    public static final int DATA_LKEY_OFFSET = 4;
    public static final int DATA_ADDR_OFFSET = 8;

    // inline segment (struct mlx5_wqe_inl_data_seg, then the payload)
    public static final int INLINE_HEADER_SIZE = 4;
    public static final int INLINE_BYTE_COUNT_OFFSET = 0;
    /** Set in the first word of a segment that carries inline data ({@code MLX5_INLINE_SEG}). */
    public static final int INLINE_SEG = 0x80000000;
    public static final int INLINE_BYTE_COUNT_MASK = 0x7fffffff;

    // atomic segment (struct mlx5_wqe_atomic_seg)
    public static final int ATOMIC_SIZE = 16;
    public static final int ATOMIC_SWAP_ADD_OFFSET = 0;
    public static final int ATOMIC_COMPARE_OFFSET = 8;
    /** Operand and result size of ATOMIC_FA / ATOMIC_CS: the data segment's byte_count. */
    public static final int ATOMIC_OPERAND_BYTES = 8;

    // Segment positions (16-byte units from the start of the WQE) of the shapes in the class comment.
    public static final int CTRL_SEGMENT = 0;
    public static final int RADDR_SEGMENT = 1;
    public static final int RDMA_DATA_SEGMENT = 2;
    public static final int INLINE_SEGMENT = 2;
    public static final int ATOMIC_SEGMENT = 2;
    public static final int ATOMIC_DATA_SEGMENT = 3;

    public static final int NOP_DS = 1;
    public static final int RDMA_DS = 3;
    public static final int ATOMIC_DS = 4;

    /**
     * Largest inline RDMA_WRITE payload the format allows: ctrl and raddr take 2 of the 63 segments, the inline
     * header 4 bytes. A real QP is further limited by the {@code max_inline_data} it was created with.
     */
    public static final int MAX_INLINE_BYTES = (MAX_DS - INLINE_SEGMENT) * SEGMENT_SIZE - INLINE_HEADER_SIZE;

    private WqeDescriptor() {
    }

    /** {@code opmod_idx_opcode} as a host int (written big-endian). */
    public static int opmodIdxOpcode(int opmod, long wqeIndex, int opcode) {
        return (opmod << OPMOD_SHIFT) | ((int) (wqeIndex & WQE_INDEX_MASK) << WQE_INDEX_SHIFT) | (opcode & OPCODE_MASK);
    }

    /** {@code qpn_ds} as a host int (written big-endian). */
    public static int qpnDs(int qpn, int ds) {
        return (qpn << QPN_SHIFT) | (ds & 0xff);
    }

    /** WQEBBs taken by a WQE of {@code ds} segments. */
    public static int wqebbsForDs(int ds) {
        return (ds + SEGMENTS_PER_WQEBB - 1) / SEGMENTS_PER_WQEBB;
    }

    /** {@code ds} of an RDMA_WRITE[_IMM] whose payload of {@code length} bytes is inline. */
    public static int inlineDs(int length) {
        return INLINE_SEGMENT + (INLINE_HEADER_SIZE + length + SEGMENT_SIZE - 1) / SEGMENT_SIZE;
    }

    /** WQEBBs in a send queue buffer; the buffer must hold a power of two of them, from index 0. */
    public static int wqebbCount(ByteBuffer sq) {
        int count = sq.capacity() >>> WQEBB_SHIFT;
        if (count == 0 || (count & (count - 1)) != 0 || (count << WQEBB_SHIFT) != sq.capacity()) {
            throw new IllegalArgumentException("send queue buffer of " + sq.capacity()
                    + " bytes is not a power of two of " + WQEBB_SIZE + "-byte WQEBBs");
        }
        return count;
    }

    /** Byte offset of the WQEBB that WQE counter {@code wqeIndex} maps to, in a ring of {@code wqebbCount}. */
    public static int wqebbOffset(long wqeIndex, int wqebbCount) {
        return (int) (wqeIndex & (wqebbCount - 1)) << WQEBB_SHIFT;
    }

    /**
     * Byte offset of segment {@code segment} (16-byte units, 0 = ctrl) of the WQE that starts at counter
     * {@code wqeIndex}, following the ring wrap: segments never straddle a WQEBB, WQEBBs may wrap to slot 0.
     */
    public static int segmentOffset(long wqeIndex, int segment, int wqebbCount) {
        return wqebbOffset(wqeIndex + segment / SEGMENTS_PER_WQEBB, wqebbCount)
                + (segment % SEGMENTS_PER_WQEBB) * SEGMENT_SIZE;
    }

    /** Byte offset of byte {@code byteInWqe} of the WQE that starts at counter {@code wqeIndex}, following the wrap. */
    public static int byteOffset(long wqeIndex, int byteInWqe, int wqebbCount) {
        return wqebbOffset(wqeIndex + (byteInWqe >>> WQEBB_SHIFT), wqebbCount) + (byteInWqe & (WQEBB_SIZE - 1));
    }
}
