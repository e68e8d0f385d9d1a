package io.gda4j.mlx5;

import java.nio.ByteBuffer;

/**
 * A reusable, mutable target for {@link WqeDecoder#decodeInto}: the same fields as {@link DecodedWqe}, filled without
 * allocating, for a polling loop that decodes every WQE (the emulated NIC's engine). One instance per thread.
 *
 * <p>When {@link #fault()} is not {@link WqeFault#NONE}, the ctrl fields hold what the ctrl segment held and the
 * segment fields are zero. An inline payload is not copied: it stays in the ring at the WQE's slots until the slot is
 * reused, and {@link #copyInlinePayload} or {@link #inlinePayloadOffset} read it there.
 */
public final class WqeFields {
    private WqeFault fault = WqeFault.NONE;
    private long counter;
    private int ringWqebbs;
    private int opcode;
    private int opmod;
    private int wqeIndex;
    private int qpn;
    private int ds;
    private int fmCeSe;
    private int imm;
    private long raddr;
    private int rkey;
    private int lkey;
    private long addr;
    private int byteCount;
    private boolean inline;
    private long swapAdd;
    private long compare;

    void reset(long counter, int ringWqebbs, int opcode, int opmod, int wqeIndex, int qpn, int ds, int fmCeSe,
               int imm) {
        this.fault = WqeFault.NONE;
        this.counter = counter;
        this.ringWqebbs = ringWqebbs;
        this.opcode = opcode;
        this.opmod = opmod;
        this.wqeIndex = wqeIndex;
        this.qpn = qpn;
        this.ds = ds;
        this.fmCeSe = fmCeSe;
        this.imm = imm;
        this.raddr = 0;
        this.rkey = 0;
        this.lkey = 0;
        this.addr = 0;
        this.byteCount = 0;
        this.inline = false;
        this.swapAdd = 0;
        this.compare = 0;
    }

    WqeFault fail(WqeFault f) {
        this.fault = f;
        return f;
    }

    void setRdma(long raddr, int rkey, int lkey, long addr, int byteCount, boolean inline) {
        this.raddr = raddr;
        this.rkey = rkey;
        this.lkey = lkey;
        this.addr = addr;
        this.byteCount = byteCount;
        this.inline = inline;
    }

    void setAtomic(long swapAdd, long compare) {
        this.swapAdd = swapAdd;
        this.compare = compare;
    }

    public WqeFault fault() {
        return fault;
    }

    public boolean ok() {
        return fault == WqeFault.NONE;
    }

    /** The free-running producer counter the WQE was decoded at. */
    public long counter() {
        return counter;
    }

    public int opcode() {
        return opcode;
    }

    public int opmod() {
        return opmod;
    }

    /** The low 16 bits of the WQE counter, from the ctrl segment. */
    public int wqeIndex() {
        return wqeIndex;
    }

    public int qpn() {
        return qpn;
    }

    public int ds() {
        return ds;
    }

    public int fmCeSe() {
        return fmCeSe;
    }

    public int imm() {
        return imm;
    }

    public long raddr() {
        return raddr;
    }

    public int rkey() {
        return rkey;
    }

    public int lkey() {
        return lkey;
    }

    public long addr() {
        return addr;
    }

    /** Bytes to move: the data segment's byte_count (unsigned), or the inline length. */
    public int byteCount() {
        return byteCount;
    }

    public boolean isInline() {
        return inline;
    }

    public long swapAdd() {
        return swapAdd;
    }

    public long compare() {
        return compare;
    }

    /** Whether the WQE asks for a CQE when it completes. */
    public boolean signaled() {
        return (fmCeSe & WqeDescriptor.FM_CE_SE_CQ_UPDATE) != 0;
    }

    /** WQEBBs the WQE occupies (1 for a ds of 0): how far the NIC's consumer counter moves past it. */
    public int wqebbs() {
        return WqeDescriptor.wqebbsForDs(Math.max(ds, 1));
    }

    /**
     * Byte offset in the ring of inline payload byte {@code i}; bytes {@code i .. } up to the end of that WQEBB are
     * contiguous ({@link #inlineRunLength}), the payload may wrap to slot 0 after that.
     */
    public int inlinePayloadOffset(int i) {
        int position = WqeDescriptor.INLINE_SEGMENT * WqeDescriptor.SEGMENT_SIZE + WqeDescriptor.INLINE_HEADER_SIZE + i;
        return WqeDescriptor.byteOffset(counter, position, ringWqebbs);
    }

    /** Contiguous payload bytes from byte {@code i} on (to the end of its WQEBB or of the payload). */
    public int inlineRunLength(int i) {
        int position = WqeDescriptor.INLINE_SEGMENT * WqeDescriptor.SEGMENT_SIZE + WqeDescriptor.INLINE_HEADER_SIZE + i;
        return Math.min(byteCount - i, WqeDescriptor.WQEBB_SIZE - (position & (WqeDescriptor.WQEBB_SIZE - 1)));
    }

    /** Copies the inline payload ({@link #byteCount()} bytes) out of the ring {@code sq} it was decoded from. */
    public void copyInlinePayload(ByteBuffer sq, byte[] dst, int dstOffset) {
        int copied = 0;
        while (copied < byteCount) {
            int run = inlineRunLength(copied);
            sq.get(inlinePayloadOffset(copied), dst, dstOffset + copied, run);
            copied += run;
        }
    }

    /** The first 8 inline payload bytes as a little-endian long (as the GPU stored them), for 8/16-byte writes. */
    public long inlineLongLittleEndian(ByteBuffer sq, int i) {
        long v = 0;
        for (int b = 7; b >= 0; b--) {
            v = (v << 8) | (sq.get(inlinePayloadOffset(i + b)) & 0xff);
        }
        return v;
    }
}
