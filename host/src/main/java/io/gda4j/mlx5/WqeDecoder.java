package io.gda4j.mlx5;

import static io.gda4j.mlx5.WqeDescriptor.ATOMIC_COMPARE_OFFSET;
import static io.gda4j.mlx5.WqeDescriptor.ATOMIC_DATA_SEGMENT;
import static io.gda4j.mlx5.WqeDescriptor.ATOMIC_DS;
import static io.gda4j.mlx5.WqeDescriptor.ATOMIC_OPERAND_BYTES;
import static io.gda4j.mlx5.WqeDescriptor.ATOMIC_SEGMENT;
import static io.gda4j.mlx5.WqeDescriptor.ATOMIC_SWAP_ADD_OFFSET;
import static io.gda4j.mlx5.WqeDescriptor.CTRL_FM_CE_SE_OFFSET;
import static io.gda4j.mlx5.WqeDescriptor.CTRL_IMM_OFFSET;
import static io.gda4j.mlx5.WqeDescriptor.CTRL_OPMOD_IDX_OPCODE_OFFSET;
import static io.gda4j.mlx5.WqeDescriptor.CTRL_QPN_DS_OFFSET;
import static io.gda4j.mlx5.WqeDescriptor.CTRL_SEGMENT;
import static io.gda4j.mlx5.WqeDescriptor.DATA_ADDR_OFFSET;
import static io.gda4j.mlx5.WqeDescriptor.DATA_BYTE_COUNT_OFFSET;
import static io.gda4j.mlx5.WqeDescriptor.DATA_LKEY_OFFSET;
import static io.gda4j.mlx5.WqeDescriptor.INLINE_BYTE_COUNT_MASK;
import static io.gda4j.mlx5.WqeDescriptor.INLINE_HEADER_SIZE;
import static io.gda4j.mlx5.WqeDescriptor.INLINE_SEG;
import static io.gda4j.mlx5.WqeDescriptor.INLINE_SEGMENT;
import static io.gda4j.mlx5.WqeDescriptor.MAX_DS;
import static io.gda4j.mlx5.WqeDescriptor.NOP_DS;
import static io.gda4j.mlx5.WqeDescriptor.OPCODE_MASK;
import static io.gda4j.mlx5.WqeDescriptor.OPMOD_SHIFT;
import static io.gda4j.mlx5.WqeDescriptor.QPN_MASK;
import static io.gda4j.mlx5.WqeDescriptor.QPN_SHIFT;
import static io.gda4j.mlx5.WqeDescriptor.RADDR_RADDR_OFFSET;
import static io.gda4j.mlx5.WqeDescriptor.RADDR_RKEY_OFFSET;
import static io.gda4j.mlx5.WqeDescriptor.RADDR_SEGMENT;
import static io.gda4j.mlx5.WqeDescriptor.RDMA_DATA_SEGMENT;
import static io.gda4j.mlx5.WqeDescriptor.RDMA_DS;
import static io.gda4j.mlx5.WqeDescriptor.SEGMENT_SIZE;
import static io.gda4j.mlx5.WqeDescriptor.WQEBB_SIZE;
import static io.gda4j.mlx5.WqeDescriptor.WQE_INDEX_MASK;
import static io.gda4j.mlx5.WqeDescriptor.WQE_INDEX_SHIFT;

import java.nio.ByteBuffer;

/**
 * Reads send WQEs written by {@link WqeEncoder}, by the GPU or by rdma-core, and says plainly when one is malformed.
 *
 * <p>Never throws for bad WQE bytes: the result's {@link DecodedWqe#fault()} names the problem and
 * {@link WqeFault#syndrome()} the error CQE it should become, so a NIC model can fail the WQE like hardware does.
 * Only a ring buffer that is not a power of two of WQEBBs (a programming error) throws. The caller must have
 * acquired the doorbell record (or equivalent) before decoding, so the WQE's plain stores are visible.
 */
public final class WqeDecoder {
    /** Pass as {@code expectedQpn} to accept any QP number. */
    public static final int ANY_QPN = -1;

    private WqeDecoder() {
    }

    /** Decodes the WQE at producer counter {@code wqeIndex}; its ctrl segment must carry that counter's low 16 bits. */
    public static DecodedWqe decode(ByteBuffer sq, long wqeIndex) {
        return decode(sq, wqeIndex, ANY_QPN);
    }

    /**
     * Decodes the WQE at producer counter {@code wqeIndex}, also requiring its ctrl segment to name
     * {@code expectedQpn} (or {@link #ANY_QPN}).
     */
    public static DecodedWqe decode(ByteBuffer sq, long wqeIndex, int expectedQpn) {
        int wqebbs = WqeDescriptor.wqebbCount(sq);
        int ctrl = WqeDescriptor.segmentOffset(wqeIndex, CTRL_SEGMENT, wqebbs);
        int opmodIdxOpcode = BigEndian.getInt(sq, ctrl + CTRL_OPMOD_IDX_OPCODE_OFFSET);
        int qpnDs = BigEndian.getInt(sq, ctrl + CTRL_QPN_DS_OFFSET);
        int opcode = opmodIdxOpcode & OPCODE_MASK;
        int opmod = opmodIdxOpcode >>> OPMOD_SHIFT;
        int index = (opmodIdxOpcode >>> WQE_INDEX_SHIFT) & WQE_INDEX_MASK;
        int qpn = (qpnDs >>> QPN_SHIFT) & QPN_MASK;
        int ds = qpnDs & 0xff;
        int fmCeSe = BigEndian.getUnsignedByte(sq, ctrl + CTRL_FM_CE_SE_OFFSET);
        int imm = BigEndian.getInt(sq, ctrl + CTRL_IMM_OFFSET);

        if (index != (int) (wqeIndex & WQE_INDEX_MASK)) {
            return ctrlOnly(WqeFault.WQE_INDEX_MISMATCH, opcode, opmod, index, qpn, ds, fmCeSe, imm);
        }
        if (expectedQpn != ANY_QPN && qpn != expectedQpn) {
            return ctrlOnly(WqeFault.QPN_MISMATCH, opcode, opmod, index, qpn, ds, fmCeSe, imm);
        }
        if (ds == 0 || ds > MAX_DS || (long) ds * SEGMENT_SIZE > (long) wqebbs * WQEBB_SIZE) {
            return ctrlOnly(WqeFault.BAD_DS, opcode, opmod, index, qpn, ds, fmCeSe, imm);
        }
        switch (opcode) {
            case Mlx5Opcode.NOP:
                if (opmod != 0) {
                    return ctrlOnly(WqeFault.BAD_OPMOD, opcode, opmod, index, qpn, ds, fmCeSe, imm);
                }
                return ctrlOnly(ds == NOP_DS ? WqeFault.NONE : WqeFault.BAD_DS, opcode, opmod, index, qpn, ds,
                        fmCeSe, imm);
            case Mlx5Opcode.RDMA_WRITE:
            case Mlx5Opcode.RDMA_WRITE_IMM:
            case Mlx5Opcode.RDMA_READ:
                return decodeRdma(sq, wqeIndex, wqebbs, opcode, opmod, index, qpn, ds, fmCeSe, imm);
            case Mlx5Opcode.ATOMIC_CS:
            case Mlx5Opcode.ATOMIC_FA:
                return decodeAtomic(sq, wqeIndex, wqebbs, opcode, opmod, index, qpn, ds, fmCeSe, imm);
            default:
                return ctrlOnly(Mlx5Opcode.isKnown(opcode) ? WqeFault.UNSUPPORTED_OPCODE : WqeFault.UNKNOWN_OPCODE,
                        opcode, opmod, index, qpn, ds, fmCeSe, imm);
        }
    }

    private static DecodedWqe decodeRdma(ByteBuffer sq, long wqeIndex, int wqebbs, int opcode, int opmod, int index,
                                         int qpn, int ds, int fmCeSe, int imm) {
        if (opmod != 0) {
            return ctrlOnly(WqeFault.BAD_OPMOD, opcode, opmod, index, qpn, ds, fmCeSe, imm);
        }
        if (ds < RDMA_DS) {
            return ctrlOnly(WqeFault.BAD_DS, opcode, opmod, index, qpn, ds, fmCeSe, imm);
        }
        int raddrSeg = WqeDescriptor.segmentOffset(wqeIndex, RADDR_SEGMENT, wqebbs);
        long raddr = BigEndian.getLong(sq, raddrSeg + RADDR_RADDR_OFFSET);
        int rkey = BigEndian.getInt(sq, raddrSeg + RADDR_RKEY_OFFSET);
        int third = WqeDescriptor.segmentOffset(wqeIndex, RDMA_DATA_SEGMENT, wqebbs);
        int firstWord = BigEndian.getInt(sq, third);

        if ((firstWord & INLINE_SEG) == 0) {
            if (ds != RDMA_DS) {
                return ctrlOnly(WqeFault.BAD_DS, opcode, opmod, index, qpn, ds, fmCeSe, imm);
            }
            return new DecodedWqe(WqeFault.NONE, opcode, opmod, index, qpn, ds, fmCeSe, imm, raddr, rkey,
                    BigEndian.getInt(sq, third + DATA_LKEY_OFFSET), BigEndian.getLong(sq, third + DATA_ADDR_OFFSET),
                    BigEndian.getInt(sq, third + DATA_BYTE_COUNT_OFFSET), null, 0L, 0L);
        }
        if (opcode == Mlx5Opcode.RDMA_READ) {
            return ctrlOnly(WqeFault.INLINE_NOT_ALLOWED, opcode, opmod, index, qpn, ds, fmCeSe, imm);
        }
        int length = firstWord & INLINE_BYTE_COUNT_MASK;
        // Compare in long: a garbage length near 2^31 must not wrap around.
        if (INLINE_HEADER_SIZE + (long) length > (long) (ds - INLINE_SEGMENT) * SEGMENT_SIZE) {
            return ctrlOnly(WqeFault.INLINE_BEYOND_WQE, opcode, opmod, index, qpn, ds, fmCeSe, imm);
        }
        if (ds != WqeDescriptor.inlineDs(length)) {
            return ctrlOnly(WqeFault.BAD_DS, opcode, opmod, index, qpn, ds, fmCeSe, imm);
        }
        byte[] payload = new byte[length];
        int position = INLINE_SEGMENT * SEGMENT_SIZE + INLINE_HEADER_SIZE;
        int copied = 0;
        while (copied < length) {
            int run = Math.min(length - copied, WQEBB_SIZE - (position & (WQEBB_SIZE - 1)));
            sq.get(WqeDescriptor.byteOffset(wqeIndex, position, wqebbs), payload, copied, run);
            copied += run;
            position += run;
        }
        return new DecodedWqe(WqeFault.NONE, opcode, opmod, index, qpn, ds, fmCeSe, imm, raddr, rkey, 0, 0L, length,
                payload, 0L, 0L);
    }

    private static DecodedWqe decodeAtomic(ByteBuffer sq, long wqeIndex, int wqebbs, int opcode, int opmod, int index,
                                           int qpn, int ds, int fmCeSe, int imm) {
        if (opmod != 0) {
            return ctrlOnly(WqeFault.BAD_OPMOD, opcode, opmod, index, qpn, ds, fmCeSe, imm);
        }
        if (ds != ATOMIC_DS) {
            return ctrlOnly(WqeFault.BAD_DS, opcode, opmod, index, qpn, ds, fmCeSe, imm);
        }
        int raddrSeg = WqeDescriptor.segmentOffset(wqeIndex, RADDR_SEGMENT, wqebbs);
        int atomicSeg = WqeDescriptor.segmentOffset(wqeIndex, ATOMIC_SEGMENT, wqebbs);
        int dataSeg = WqeDescriptor.segmentOffset(wqeIndex, ATOMIC_DATA_SEGMENT, wqebbs);
        int byteCount = BigEndian.getInt(sq, dataSeg + DATA_BYTE_COUNT_OFFSET);
        if ((byteCount & INLINE_SEG) != 0) {
            return ctrlOnly(WqeFault.INLINE_NOT_ALLOWED, opcode, opmod, index, qpn, ds, fmCeSe, imm);
        }
        if (byteCount != ATOMIC_OPERAND_BYTES) {
            return ctrlOnly(WqeFault.BAD_ATOMIC_LENGTH, opcode, opmod, index, qpn, ds, fmCeSe, imm);
        }
        return new DecodedWqe(WqeFault.NONE, opcode, opmod, index, qpn, ds, fmCeSe, imm,
                BigEndian.getLong(sq, raddrSeg + RADDR_RADDR_OFFSET),
                BigEndian.getInt(sq, raddrSeg + RADDR_RKEY_OFFSET),
                BigEndian.getInt(sq, dataSeg + DATA_LKEY_OFFSET), BigEndian.getLong(sq, dataSeg + DATA_ADDR_OFFSET),
                byteCount, null, BigEndian.getLong(sq, atomicSeg + ATOMIC_SWAP_ADD_OFFSET),
                BigEndian.getLong(sq, atomicSeg + ATOMIC_COMPARE_OFFSET));
    }

    private static DecodedWqe ctrlOnly(WqeFault fault, int opcode, int opmod, int index, int qpn, int ds, int fmCeSe,
                                       int imm) {
        return new DecodedWqe(fault, opcode, opmod, index, qpn, ds, fmCeSe, imm, 0L, 0, 0, 0L, 0, null, 0L, 0L);
    }
}
