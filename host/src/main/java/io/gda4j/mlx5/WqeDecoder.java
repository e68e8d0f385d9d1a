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
 * <p>Never throws for bad WQE bytes: the result's fault names the problem and {@link WqeFault#syndrome()} the error
 * CQE it should become, so a NIC model can fail the WQE like hardware does. Only a ring buffer that is not a power of
 * two of WQEBBs (a programming error) throws. The caller must have acquired the doorbell record (or equivalent)
 * before decoding, so the WQE's plain stores are visible.
 *
 * <p>Two forms: {@link #decode} returns an immutable {@link DecodedWqe} (tests, set-up, error paths);
 * {@link #decodeInto} fills a reusable {@link WqeFields} and allocates nothing (the emulated NIC's engine).
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
        WqeFields f = new WqeFields();
        decodeInto(sq, wqeIndex, expectedQpn, f);
        byte[] payload = null;
        if (f.isInline()) {
            payload = new byte[f.byteCount()];
            f.copyInlinePayload(sq, payload, 0);
        }
        return new DecodedWqe(f.fault(), f.opcode(), f.opmod(), f.wqeIndex(), f.qpn(), f.ds(), f.fmCeSe(), f.imm(),
                f.raddr(), f.rkey(), f.lkey(), f.addr(), f.byteCount(), payload, f.swapAdd(), f.compare());
    }

    /**
     * Decodes the WQE at producer counter {@code wqeIndex} into {@code out} without allocating, and returns its
     * fault ({@link WqeFault#NONE} when well formed). An inline payload stays in the ring: read it with
     * {@link WqeFields#copyInlinePayload} or {@link WqeFields#inlinePayloadOffset} while the slot is not reused.
     */
    public static WqeFault decodeInto(ByteBuffer sq, long wqeIndex, int expectedQpn, WqeFields out) {
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
        out.reset(wqeIndex, wqebbs, opcode, opmod, index, qpn, ds, fmCeSe, imm);

        if (index != (int) (wqeIndex & WQE_INDEX_MASK)) {
            return out.fail(WqeFault.WQE_INDEX_MISMATCH);
        }
        if (expectedQpn != ANY_QPN && qpn != expectedQpn) {
            return out.fail(WqeFault.QPN_MISMATCH);
        }
        if (ds == 0 || ds > MAX_DS || (long) ds * SEGMENT_SIZE > (long) wqebbs * WQEBB_SIZE) {
            return out.fail(WqeFault.BAD_DS);
        }
        switch (opcode) {
            case Mlx5Opcode.NOP:
                if (opmod != 0) {
                    return out.fail(WqeFault.BAD_OPMOD);
                }
                return ds == NOP_DS ? WqeFault.NONE : out.fail(WqeFault.BAD_DS);
            case Mlx5Opcode.RDMA_WRITE:
            case Mlx5Opcode.RDMA_WRITE_IMM:
            case Mlx5Opcode.RDMA_READ:
                return decodeRdma(sq, wqeIndex, wqebbs, out);
            case Mlx5Opcode.ATOMIC_CS:
            case Mlx5Opcode.ATOMIC_FA:
                return decodeAtomic(sq, wqeIndex, wqebbs, out);
            default:
                return out.fail(Mlx5Opcode.isKnown(opcode) ? WqeFault.UNSUPPORTED_OPCODE : WqeFault.UNKNOWN_OPCODE);
        }
    }

    private static WqeFault decodeRdma(ByteBuffer sq, long wqeIndex, int wqebbs, WqeFields out) {
        int ds = out.ds();
        if (out.opmod() != 0) {
            return out.fail(WqeFault.BAD_OPMOD);
        }
        if (ds < RDMA_DS) {
            return out.fail(WqeFault.BAD_DS);
        }
        int raddrSeg = WqeDescriptor.segmentOffset(wqeIndex, RADDR_SEGMENT, wqebbs);
        long raddr = BigEndian.getLong(sq, raddrSeg + RADDR_RADDR_OFFSET);
        int rkey = BigEndian.getInt(sq, raddrSeg + RADDR_RKEY_OFFSET);
        int third = WqeDescriptor.segmentOffset(wqeIndex, RDMA_DATA_SEGMENT, wqebbs);
        int firstWord = BigEndian.getInt(sq, third);

        if ((firstWord & INLINE_SEG) == 0) {
            if (ds != RDMA_DS) {
                return out.fail(WqeFault.BAD_DS);
            }
            out.setRdma(raddr, rkey, BigEndian.getInt(sq, third + DATA_LKEY_OFFSET),
                    BigEndian.getLong(sq, third + DATA_ADDR_OFFSET), BigEndian.getInt(sq, third + DATA_BYTE_COUNT_OFFSET),
                    false);
            return WqeFault.NONE;
        }
        if (out.opcode() == Mlx5Opcode.RDMA_READ) {
            return out.fail(WqeFault.INLINE_NOT_ALLOWED);
        }
        int length = firstWord & INLINE_BYTE_COUNT_MASK;
        // Compare in long: a garbage length near 2^31 must not wrap around.
        if (INLINE_HEADER_SIZE + (long) length > (long) (ds - INLINE_SEGMENT) * SEGMENT_SIZE) {
            return out.fail(WqeFault.INLINE_BEYOND_WQE);
        }
        if (ds != WqeDescriptor.inlineDs(length)) {
            return out.fail(WqeFault.BAD_DS);
        }
        out.setRdma(raddr, rkey, 0, 0L, length, true);
        return WqeFault.NONE;
    }

    private static WqeFault decodeAtomic(ByteBuffer sq, long wqeIndex, int wqebbs, WqeFields out) {
        if (out.opmod() != 0) {
            return out.fail(WqeFault.BAD_OPMOD);
        }
        if (out.ds() != ATOMIC_DS) {
            return out.fail(WqeFault.BAD_DS);
        }
        int raddrSeg = WqeDescriptor.segmentOffset(wqeIndex, RADDR_SEGMENT, wqebbs);
        int atomicSeg = WqeDescriptor.segmentOffset(wqeIndex, ATOMIC_SEGMENT, wqebbs);
        int dataSeg = WqeDescriptor.segmentOffset(wqeIndex, ATOMIC_DATA_SEGMENT, wqebbs);
        int byteCount = BigEndian.getInt(sq, dataSeg + DATA_BYTE_COUNT_OFFSET);
        if ((byteCount & INLINE_SEG) != 0) {
            return out.fail(WqeFault.INLINE_NOT_ALLOWED);
        }
        if (byteCount != ATOMIC_OPERAND_BYTES) {
            return out.fail(WqeFault.BAD_ATOMIC_LENGTH);
        }
        out.setRdma(BigEndian.getLong(sq, raddrSeg + RADDR_RADDR_OFFSET),
                BigEndian.getInt(sq, raddrSeg + RADDR_RKEY_OFFSET), BigEndian.getInt(sq, dataSeg + DATA_LKEY_OFFSET),
                BigEndian.getLong(sq, dataSeg + DATA_ADDR_OFFSET), byteCount, false);
        out.setAtomic(BigEndian.getLong(sq, atomicSeg + ATOMIC_SWAP_ADD_OFFSET),
                BigEndian.getLong(sq, atomicSeg + ATOMIC_COMPARE_OFFSET));
        return WqeFault.NONE;
    }
}
