package io.gda4j.mlx5;

import java.nio.ByteBuffer;

/**
 * Layout of a 64-byte mlx5 CQE ({@code struct mlx5_cqe64}, and {@code struct mlx5_err_cqe} for errors), big-endian,
 * in a ring of a power of two of CQEs.
 *
 * <pre>{@code
 * byte:   0               1               2               3
 *         +---------------+---------------+---------------+---------------+
 *       0 |  responder and offload fields (checksums, flow tag, slid,     |
 *     ... |  rqpn, vlan ...); gda4j reads none of them                    |
 *      28 |                                                               |
 *         +---------------+---------------+---------------+---------------+
 *      32 |                           srqn_uidx                           |
 *      36 |                         imm_inval_pkey                        |
 *      40 |      app      |    app_op     |            app_info           |
 *      44 |                           byte_cnt                            |
 *      48 |                        timestamp (64)                         |
 *      52 |                                                               |
 *         +- - - - - - - -+- - - - - - - -+- - - - - - - -+- - - - - - - -+
 *  error  |  36..53 reserved               |vendor_err_synd|   syndrome    |  bytes 54, 55 of an error CQE
 *         +---------------+---------------+---------------+---------------+
 *      56 | s_wqe_opcode  |                   qpn (24)                    |  sop_drop_qpn
 *      60 |          wqe_counter          |   signature   |    op_own     |
 *         +---------------+---------------+---------------+---------------+
 *
 * op_own:  7     4   3   2   1     0
 *         +--------+-------+----+-------+
 *         | opcode | format| se | owner |      opcode = op_own >> 4, owner = op_own & 1
 *         +--------+-------+----+-------+
 * }</pre>
 * Byte 56 holds the opcode of the send WQE a requester CQE (or error CQE) reports, as the kernel's mlx5 driver reads
 * it ({@code be32_to_cpu(sop_drop_qpn) >> 24}); {@code wqe_counter} is the low 16 bits of that WQE's counter.
 *
 * <p>Ownership: the CQE at consumer counter {@code n} holds a new completion when its opcode is not
 * {@link CqeOpcode#INVALID} and its owner bit equals {@code (n & cqeCount) != 0}, i.e. the NIC writes owner 0 on
 * the first pass around the ring, 1 on the second, and so on (rdma-core's {@code get_sw_cqe}). The last 8 bytes
 * ({@link #TAIL_OFFSET}) are written last and in one store, so a poller that acquires them sees the whole CQE.
 */
public final class CqeDescriptor {
    public static final int CQE_SIZE = 64;
    public static final int CQE_SHIFT = 6;

    public static final int SRQN_UIDX_OFFSET = 32;
    public static final int IMM_INVAL_PKEY_OFFSET = 36;
    public static final int BYTE_CNT_OFFSET = 44;
    public static final int TIMESTAMP_OFFSET = 48;
    /** Error CQE: vendor-specific syndrome byte (what Mellanox support asks for). */
    public static final int VENDOR_ERR_SYND_OFFSET = 54;
    /** Error CQE: {@link CqeSyndrome} byte. */
    public static final int SYNDROME_OFFSET = 55;
    /** {@code sop_drop_qpn} (normal) / {@code s_wqe_opcode_qpn} (error): WQE opcode in the top byte, QPN below. */
    public static final int SOP_DROP_QPN_OFFSET = 56;
    public static final int S_WQE_OPCODE_OFFSET = 56;
    public static final int WQE_COUNTER_OFFSET = 60;
    public static final int SIGNATURE_OFFSET = 62;
    public static final int OP_OWN_OFFSET = 63;
    /** The last 8 bytes: s_wqe_opcode, qpn, wqe_counter, signature, op_own; published together, last. */
    public static final int TAIL_OFFSET = 56;

    public static final int QPN_MASK = 0xffffff;
    public static final int S_WQE_OPCODE_SHIFT = 24;
    public static final int OPCODE_SHIFT = 4;
    /** {@code MLX5_CQE_OWNER_MASK}. */
    public static final int OWNER_MASK = 1;

    private CqeDescriptor() {
    }

    /** CQEs in a completion queue buffer; the buffer must hold a power of two of 64-byte CQEs, from index 0. */
    public static int cqeCount(ByteBuffer cq) {
        int count = cq.capacity() >>> CQE_SHIFT;
        if (count == 0 || (count & (count - 1)) != 0 || (count << CQE_SHIFT) != cq.capacity()) {
            throw new IllegalArgumentException("completion queue buffer of " + cq.capacity()
                    + " bytes is not a power of two of " + CQE_SIZE + "-byte CQEs");
        }
        return count;
    }

    /** Byte offset of the CQE that consumer counter {@code cqeIndex} maps to. */
    public static int cqeOffset(long cqeIndex, int cqeCount) {
        return (int) (cqeIndex & (cqeCount - 1)) << CQE_SHIFT;
    }

    /** The owner bit a fresh CQE carries at consumer counter {@code cqeIndex}: the parity of the ring pass. */
    public static int ownerBit(long cqeIndex, int cqeCount) {
        return (cqeIndex & cqeCount) != 0 ? 1 : 0;
    }

    /** {@code op_own} of a CQE with this opcode and owner bit (se and format zero). */
    public static int opOwn(int cqeOpcode, int owner) {
        return (cqeOpcode << OPCODE_SHIFT) | (owner & OWNER_MASK);
    }

    /** The CQE opcode in an {@code op_own} byte ({@code mlx5dv_get_cqe_opcode}). */
    public static int opcodeOf(int opOwn) {
        return (opOwn & 0xff) >>> OPCODE_SHIFT;
    }

    /** The owner bit in an {@code op_own} byte ({@code mlx5dv_get_cqe_owner}). */
    public static int ownerOf(int opOwn) {
        return opOwn & OWNER_MASK;
    }
}
