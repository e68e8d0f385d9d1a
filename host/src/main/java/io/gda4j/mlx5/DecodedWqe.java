package io.gda4j.mlx5;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * One send WQE as {@link WqeDecoder} read it, or the reason it could not.
 *
 * <p>When {@link #fault()} is not {@link WqeFault#NONE}, the ctrl fields (opcode, opmod, wqeIndex, qpn, ds, fmCeSe,
 * imm) are what the ctrl segment held and the segment fields are zero. Fields that the opcode's shape lacks are zero
 * (no lkey for inline, no swapAdd for a WRITE); {@link #inlinePayload()} is null unless the WQE carried inline data.
 *
 * @param fault         {@link WqeFault#NONE}, or why the WQE is malformed
 * @param opcode        {@link Mlx5Opcode} value
 * @param opmod         opcode modifier (0 except for masked atomics)
 * @param wqeIndex      the low 16 bits of the WQE counter, from the ctrl segment
 * @param qpn           24-bit QP number from the ctrl segment
 * @param ds            size in 16-byte segments
 * @param fmCeSe        {@code WqeDescriptor.FM_CE_SE_*} bits
 * @param imm           immediate as a host int (meaningful for RDMA_WRITE_IMM)
 * @param raddr         remote address
 * @param rkey          remote key
 * @param lkey          local key of the data segment
 * @param addr          local address of the data segment
 * @param byteCount     bytes to move: the data segment's byte_count, or the inline length
 * @param inlinePayload the inline bytes, or null
 * @param swapAdd       the add operand of ATOMIC_FA, the swap value of ATOMIC_CS
 * @param compare       the compare value of ATOMIC_CS
 */
public record DecodedWqe(WqeFault fault, int opcode, int opmod, int wqeIndex, int qpn, int ds, int fmCeSe, int imm,
                         long raddr, int rkey, int lkey, long addr, int byteCount, byte[] inlinePayload,
                         long swapAdd, long compare) {

    /** Whether the WQE decoded cleanly. */
    public boolean ok() {
        return fault == WqeFault.NONE;
    }

    /** Whether the WQE asks for a CQE when it completes. */
    public boolean signaled() {
        return (fmCeSe & WqeDescriptor.FM_CE_SE_CQ_UPDATE) != 0;
    }

    /** Whether the payload travels inside the WQE. */
    public boolean isInline() {
        return inlinePayload != null;
    }

    /** WQEBBs the WQE occupies: how far the NIC's consumer counter moves past it. */
    public int wqebbs() {
        return WqeDescriptor.wqebbsForDs(Math.max(ds, 1));
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof DecodedWqe that && fault == that.fault && opcode == that.opcode
                && opmod == that.opmod && wqeIndex == that.wqeIndex && qpn == that.qpn && ds == that.ds
                && fmCeSe == that.fmCeSe && imm == that.imm && raddr == that.raddr && rkey == that.rkey
                && lkey == that.lkey && addr == that.addr && byteCount == that.byteCount
                && Arrays.equals(inlinePayload, that.inlinePayload) && swapAdd == that.swapAdd
                && compare == that.compare;
    }

    @Override
    public int hashCode() {
        int result = 31 * fault.hashCode() + opcode;
        result = 31 * result + wqeIndex;
        result = 31 * result + qpn;
        result = 31 * result + Long.hashCode(raddr);
        result = 31 * result + Long.hashCode(addr);
        return 31 * result + Arrays.hashCode(inlinePayload);
    }

    @Override
    public String toString() {
        return String.format("DecodedWqe[%s %s opmod=0x%02x wqeIndex=%d qpn=0x%06x ds=%d fmCeSe=0x%02x imm=0x%08x"
                        + " raddr=0x%x rkey=0x%08x lkey=0x%08x addr=0x%x byteCount=%d inline=%s swapAdd=0x%x"
                        + " compare=0x%x]", fault, Mlx5Opcode.name(opcode), opmod, wqeIndex, qpn, ds, fmCeSe, imm,
                raddr, rkey, lkey, addr, byteCount,
                inlinePayload == null ? "-" : HexFormat.of().formatHex(inlinePayload), swapAdd, compare);
    }
}
