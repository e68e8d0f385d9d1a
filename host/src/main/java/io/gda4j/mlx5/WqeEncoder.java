package io.gda4j.mlx5;

import static io.gda4j.mlx5.WqeDescriptor.ATOMIC_COMPARE_OFFSET;
import static io.gda4j.mlx5.WqeDescriptor.ATOMIC_DATA_SEGMENT;
import static io.gda4j.mlx5.WqeDescriptor.ATOMIC_DS;
import static io.gda4j.mlx5.WqeDescriptor.ATOMIC_OPERAND_BYTES;
import static io.gda4j.mlx5.WqeDescriptor.ATOMIC_SEGMENT;
import static io.gda4j.mlx5.WqeDescriptor.ATOMIC_SWAP_ADD_OFFSET;
import static io.gda4j.mlx5.WqeDescriptor.CTRL_IMM_OFFSET;
import static io.gda4j.mlx5.WqeDescriptor.CTRL_OPMOD_IDX_OPCODE_OFFSET;
import static io.gda4j.mlx5.WqeDescriptor.CTRL_QPN_DS_OFFSET;
import static io.gda4j.mlx5.WqeDescriptor.CTRL_SEGMENT;
import static io.gda4j.mlx5.WqeDescriptor.CTRL_SIGNATURE_OFFSET;
import static io.gda4j.mlx5.WqeDescriptor.DATA_ADDR_OFFSET;
import static io.gda4j.mlx5.WqeDescriptor.DATA_BYTE_COUNT_OFFSET;
import static io.gda4j.mlx5.WqeDescriptor.DATA_LKEY_OFFSET;
import static io.gda4j.mlx5.WqeDescriptor.INLINE_BYTE_COUNT_OFFSET;
import static io.gda4j.mlx5.WqeDescriptor.INLINE_HEADER_SIZE;
import static io.gda4j.mlx5.WqeDescriptor.INLINE_SEG;
import static io.gda4j.mlx5.WqeDescriptor.INLINE_SEGMENT;
import static io.gda4j.mlx5.WqeDescriptor.MAX_INLINE_BYTES;
import static io.gda4j.mlx5.WqeDescriptor.NOP_DS;
import static io.gda4j.mlx5.WqeDescriptor.QPN_MASK;
import static io.gda4j.mlx5.WqeDescriptor.RADDR_RADDR_OFFSET;
import static io.gda4j.mlx5.WqeDescriptor.RADDR_RESERVED_OFFSET;
import static io.gda4j.mlx5.WqeDescriptor.RADDR_RKEY_OFFSET;
import static io.gda4j.mlx5.WqeDescriptor.RADDR_SEGMENT;
import static io.gda4j.mlx5.WqeDescriptor.RDMA_DATA_SEGMENT;
import static io.gda4j.mlx5.WqeDescriptor.RDMA_DS;
import static io.gda4j.mlx5.WqeDescriptor.SEGMENT_SIZE;
import static io.gda4j.mlx5.WqeDescriptor.WQEBB_SIZE;

import java.nio.ByteBuffer;

/**
 * Writes mlx5 send WQEs into a send queue ring, byte for byte as rdma-core's mlx5 provider would.
 *
 * <p>The ring is a {@link ByteBuffer} whose index 0 is WQEBB 0 and whose capacity is a power of two of WQEBBs (any
 * byte order: fields are written big-endian explicitly). {@code wqeIndex} is the free-running producer counter:
 * its low 16 bits go into the ctrl segment, its low bits modulo the ring pick the slot, and a multi-WQEBB WQE wraps
 * to slot 0. Each method returns the number of WQEBBs written; the caller advances its counter by that much.
 *
 * <p>Every argument is stored as given except where noted: {@code qpn} is 24 bits, {@code fmCeSe} is a combination
 * of {@code WqeDescriptor.FM_CE_SE_*}. Stores are plain: the WQE becomes visible to the NIC (or the emulated NIC)
 * only through the doorbell record's release store ({@link DoorbellRecordDescriptor#putSendCounterRelease}), which
 * must follow. Segment bytes that rdma-core leaves unwritten (signature, reserved words, inline padding) are
 * written as zero so that the same inputs always give the same bytes. No allocation.
 */
public final class WqeEncoder {
    private WqeEncoder() {
    }

    /** NOP: ctrl only (ds 1). Useful for a signaled marker or to pad the ring. */
    public static int writeNop(ByteBuffer sq, long wqeIndex, int qpn, int fmCeSe) {
        int wqebbs = WqeDescriptor.wqebbCount(sq);
        writeCtrl(sq, wqeIndex, wqebbs, Mlx5Opcode.NOP, 0, qpn, NOP_DS, fmCeSe, 0);
        return 1;
    }

    /** RDMA WRITE of {@code byteCount} bytes from {@code laddr}/{@code lkey} to {@code raddr}/{@code rkey} (ds 3). */
    public static int writeRdmaWrite(ByteBuffer sq, long wqeIndex, int qpn, int fmCeSe,
                                     long raddr, int rkey, long laddr, int lkey, int byteCount) {
        return writeRdma(sq, wqeIndex, Mlx5Opcode.RDMA_WRITE, qpn, fmCeSe, 0, raddr, rkey, laddr, lkey, byteCount);
    }

    /**
     * RDMA WRITE with immediate (ds 3). {@code imm} is the 32-bit value as the receiver should read it after
     * {@code be32toh(wc.imm_data)}: it is stored big-endian, which is what rdma-core stores for a
     * {@code wr.imm_data = htobe32(imm)}.
     */
    public static int writeRdmaWriteImm(ByteBuffer sq, long wqeIndex, int qpn, int fmCeSe, int imm,
                                        long raddr, int rkey, long laddr, int lkey, int byteCount) {
        return writeRdma(sq, wqeIndex, Mlx5Opcode.RDMA_WRITE_IMM, qpn, fmCeSe, imm, raddr, rkey, laddr, lkey,
                byteCount);
    }

    /** RDMA READ of {@code byteCount} bytes from {@code raddr}/{@code rkey} into {@code laddr}/{@code lkey} (ds 3). */
    public static int writeRdmaRead(ByteBuffer sq, long wqeIndex, int qpn, int fmCeSe,
                                    long raddr, int rkey, long laddr, int lkey, int byteCount) {
        return writeRdma(sq, wqeIndex, Mlx5Opcode.RDMA_READ, qpn, fmCeSe, 0, raddr, rkey, laddr, lkey, byteCount);
    }

    /**
     * RDMA WRITE whose payload travels inside the WQE: no lkey, the source may be reused as soon as this returns.
     * ds = 2 + ceil((4 + length) / 16), so 1 WQEBB for up to 28 bytes and at most {@link WqeDescriptor#MAX_WQEBBS}
     * for {@link WqeDescriptor#MAX_INLINE_BYTES}. The QP must have been created with
     * {@code max_inline_data >= length}.
     */
    public static int writeRdmaWriteInline(ByteBuffer sq, long wqeIndex, int qpn, int fmCeSe,
                                           long raddr, int rkey, byte[] payload, int offset, int length) {
        if (length < 0 || length > MAX_INLINE_BYTES) {
            throw new IllegalArgumentException("inline payload of " + length + " bytes; the WQE holds 0.."
                    + MAX_INLINE_BYTES);
        }
        int wqebbs = WqeDescriptor.wqebbCount(sq);
        int ds = WqeDescriptor.inlineDs(length);
        writeCtrl(sq, wqeIndex, wqebbs, Mlx5Opcode.RDMA_WRITE, 0, qpn, ds, fmCeSe, 0);
        writeRaddr(sq, WqeDescriptor.segmentOffset(wqeIndex, RADDR_SEGMENT, wqebbs), raddr, rkey);

        int header = WqeDescriptor.segmentOffset(wqeIndex, INLINE_SEGMENT, wqebbs);
        BigEndian.putInt(sq, header + INLINE_BYTE_COUNT_OFFSET, length | INLINE_SEG);
        // Payload and zero padding up to the end of the last segment, one WQEBB-sized run at a time.
        int position = INLINE_SEGMENT * SEGMENT_SIZE + INLINE_HEADER_SIZE;
        int end = ds * SEGMENT_SIZE;
        int copied = 0;
        while (position < end) {
            int run = Math.min(end - position, WQEBB_SIZE - (position & (WQEBB_SIZE - 1)));
            int at = WqeDescriptor.byteOffset(wqeIndex, position, wqebbs);
            int fromPayload = Math.min(run, length - copied);
            if (fromPayload > 0) {
                sq.put(at, payload, offset + copied, fromPayload);
                copied += fromPayload;
            }
            for (int i = Math.max(fromPayload, 0); i < run; i++) {
                sq.put(at + i, (byte) 0);
            }
            position += run;
        }
        return WqeDescriptor.wqebbsForDs(ds);
    }

    /**
     * 8-byte atomic fetch-and-add of {@code add} at {@code raddr} (8-byte aligned); the old value is written to
     * {@code laddr}/{@code lkey} (a null MR's lkey discards it). ds 4.
     */
    public static int writeAtomicFetchAdd(ByteBuffer sq, long wqeIndex, int qpn, int fmCeSe,
                                          long raddr, int rkey, long add, long laddr, int lkey) {
        return writeAtomic(sq, wqeIndex, Mlx5Opcode.ATOMIC_FA, qpn, fmCeSe, raddr, rkey, add, 0L, laddr, lkey);
    }

    /**
     * 8-byte atomic compare-and-swap at {@code raddr}: if it holds {@code compare} it becomes {@code swap}; the old
     * value is written to {@code laddr}/{@code lkey}. ds 4.
     */
    public static int writeAtomicCompareSwap(ByteBuffer sq, long wqeIndex, int qpn, int fmCeSe,
                                             long raddr, int rkey, long compare, long swap, long laddr, int lkey) {
        return writeAtomic(sq, wqeIndex, Mlx5Opcode.ATOMIC_CS, qpn, fmCeSe, raddr, rkey, swap, compare, laddr, lkey);
    }

    private static int writeRdma(ByteBuffer sq, long wqeIndex, int opcode, int qpn, int fmCeSe, int imm,
                                 long raddr, int rkey, long laddr, int lkey, int byteCount) {
        if (byteCount < 0) {
            // Bit 31 of a data segment's first word would mark it inline.
            throw new IllegalArgumentException("byte count " + Integer.toUnsignedString(byteCount)
                    + " is over 2^31 - 1");
        }
        int wqebbs = WqeDescriptor.wqebbCount(sq);
        writeCtrl(sq, wqeIndex, wqebbs, opcode, 0, qpn, RDMA_DS, fmCeSe, imm);
        writeRaddr(sq, WqeDescriptor.segmentOffset(wqeIndex, RADDR_SEGMENT, wqebbs), raddr, rkey);
        writeData(sq, WqeDescriptor.segmentOffset(wqeIndex, RDMA_DATA_SEGMENT, wqebbs), byteCount, lkey, laddr);
        return 1;
    }

    private static int writeAtomic(ByteBuffer sq, long wqeIndex, int opcode, int qpn, int fmCeSe,
                                   long raddr, int rkey, long swapAdd, long compare, long laddr, int lkey) {
        int wqebbs = WqeDescriptor.wqebbCount(sq);
        writeCtrl(sq, wqeIndex, wqebbs, opcode, 0, qpn, ATOMIC_DS, fmCeSe, 0);
        writeRaddr(sq, WqeDescriptor.segmentOffset(wqeIndex, RADDR_SEGMENT, wqebbs), raddr, rkey);
        int atomic = WqeDescriptor.segmentOffset(wqeIndex, ATOMIC_SEGMENT, wqebbs);
        BigEndian.putLong(sq, atomic + ATOMIC_SWAP_ADD_OFFSET, swapAdd);
        BigEndian.putLong(sq, atomic + ATOMIC_COMPARE_OFFSET, compare);
        writeData(sq, WqeDescriptor.segmentOffset(wqeIndex, ATOMIC_DATA_SEGMENT, wqebbs), ATOMIC_OPERAND_BYTES,
                lkey, laddr);
        return 1;
    }

    private static void writeCtrl(ByteBuffer sq, long wqeIndex, int wqebbs, int opcode, int opmod, int qpn, int ds,
                                  int fmCeSe, int imm) {
        if ((qpn & ~QPN_MASK) != 0) {
            throw new IllegalArgumentException(String.format("qpn 0x%x does not fit in 24 bits", qpn));
        }
        if ((fmCeSe & ~0xff) != 0) {
            throw new IllegalArgumentException(String.format("fm_ce_se 0x%x does not fit in a byte", fmCeSe));
        }
        int ctrl = WqeDescriptor.segmentOffset(wqeIndex, CTRL_SEGMENT, wqebbs);
        BigEndian.putInt(sq, ctrl + CTRL_OPMOD_IDX_OPCODE_OFFSET,
                WqeDescriptor.opmodIdxOpcode(opmod, wqeIndex, opcode));
        BigEndian.putInt(sq, ctrl + CTRL_QPN_DS_OFFSET, WqeDescriptor.qpnDs(qpn, ds));
        // The word at 8 is signature (0) | dci_stream_channel_id (0) | fm_ce_se: fm_ce_se is its low byte.
        BigEndian.putInt(sq, ctrl + CTRL_SIGNATURE_OFFSET, fmCeSe);
        BigEndian.putInt(sq, ctrl + CTRL_IMM_OFFSET, imm);
    }

    private static void writeRaddr(ByteBuffer sq, int segment, long raddr, int rkey) {
        BigEndian.putLong(sq, segment + RADDR_RADDR_OFFSET, raddr);
        BigEndian.putInt(sq, segment + RADDR_RKEY_OFFSET, rkey);
        BigEndian.putInt(sq, segment + RADDR_RESERVED_OFFSET, 0);
    }

    private static void writeData(ByteBuffer sq, int segment, int byteCount, int lkey, long addr) {
        BigEndian.putInt(sq, segment + DATA_BYTE_COUNT_OFFSET, byteCount);
        BigEndian.putInt(sq, segment + DATA_LKEY_OFFSET, lkey);
        BigEndian.putLong(sq, segment + DATA_ADDR_OFFSET, addr);
    }
}
