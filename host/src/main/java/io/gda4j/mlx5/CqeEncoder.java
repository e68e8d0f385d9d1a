package io.gda4j.mlx5;

import static io.gda4j.mlx5.CqeDescriptor.BYTE_CNT_OFFSET;
import static io.gda4j.mlx5.CqeDescriptor.CQE_SIZE;
import static io.gda4j.mlx5.CqeDescriptor.OP_OWN_OFFSET;
import static io.gda4j.mlx5.CqeDescriptor.QPN_MASK;
import static io.gda4j.mlx5.CqeDescriptor.SYNDROME_OFFSET;
import static io.gda4j.mlx5.CqeDescriptor.S_WQE_OPCODE_SHIFT;
import static io.gda4j.mlx5.CqeDescriptor.TAIL_OFFSET;
import static io.gda4j.mlx5.CqeDescriptor.VENDOR_ERR_SYND_OFFSET;

import java.nio.ByteBuffer;

/**
 * Writes 64-byte mlx5 CQEs the way the NIC does, for the emulated NIC and for tests.
 *
 * <p>The body is written with plain stores, then the last 8 bytes ({@link CqeDescriptor#TAIL_OFFSET}: WQE opcode,
 * QPN, wqe_counter, op_own with the owner bit) with one release store, which pairs with
 * {@link CqeDecoder#poll}'s acquire load (or a device {@code ld.acquire}). A stream-ordered writer
 * ({@code cuStreamWriteValue64}) can publish the same 8 bytes from {@link #tail}; it takes them in host order, so
 * on a little-endian host it is given {@code Long.reverseBytes(tail(...))}.
 */
public final class CqeEncoder {
    private CqeEncoder() {
    }

    /** Marks every CQE as never written ({@code op_own = INVALID << 4}), as rdma-core does when it creates a CQ. */
    public static void initialize(ByteBuffer cq) {
        int count = CqeDescriptor.cqeCount(cq);
        for (int i = 0; i < count; i++) {
            int base = i * CQE_SIZE;
            for (int b = 0; b < CQE_SIZE; b += Long.BYTES) {
                BigEndian.putLong(cq, base + b, 0L);
            }
            cq.put(base + OP_OWN_OFFSET, (byte) CqeDescriptor.opOwn(CqeOpcode.INVALID, 0));
        }
    }

    /**
     * A successful requester completion ({@link CqeOpcode#REQ}) for the send WQE with counter {@code wqeCounter}
     * and opcode {@code wqeOpcode}, at consumer counter {@code cqeIndex}. {@code byteCount} is what the NIC reports
     * (bytes read for RDMA_READ, 8 for atomics).
     */
    public static void writeRequester(ByteBuffer cq, long cqeIndex, int qpn, int wqeCounter, int wqeOpcode,
                                      int byteCount) {
        long tail = prepareRequester(cq, cqeIndex, qpn, wqeCounter, wqeOpcode, byteCount);
        BigEndian.putLongRelease(cq, CqeDescriptor.cqeOffset(cqeIndex, CqeDescriptor.cqeCount(cq)) + TAIL_OFFSET, tail);
    }

    /**
     * Writes the body of a requester CQE (everything before {@link CqeDescriptor#TAIL_OFFSET}) with plain stores and
     * returns its tail, for a writer that publishes the tail later with one 8-byte store of its own (the emulated
     * NIC's {@code cuStreamWriteValue64}, given {@code Long.reverseBytes(tail)} on a little-endian host). The body
     * must be written before the tail is published; until then the slot still reads as the old CQE.
     */
    public static long prepareRequester(ByteBuffer cq, long cqeIndex, int qpn, int wqeCounter, int wqeOpcode,
                                        int byteCount) {
        int count = CqeDescriptor.cqeCount(cq);
        int base = CqeDescriptor.cqeOffset(cqeIndex, count);
        clearBody(cq, base);
        BigEndian.putInt(cq, base + BYTE_CNT_OFFSET, byteCount);
        return tail(wqeOpcode, qpn, wqeCounter, CqeDescriptor.opOwn(CqeOpcode.REQ,
                CqeDescriptor.ownerBit(cqeIndex, count)));
    }

    /**
     * An error completion ({@link CqeOpcode#REQ_ERR} or {@link CqeOpcode#RESP_ERR}) with a
     * {@link CqeSyndrome} code and a vendor syndrome, at consumer counter {@code cqeIndex}.
     */
    public static void writeError(ByteBuffer cq, long cqeIndex, int cqeOpcode, int qpn, int wqeCounter, int wqeOpcode,
                                  int syndrome, int vendorSyndrome) {
        long tail = prepareError(cq, cqeIndex, cqeOpcode, qpn, wqeCounter, wqeOpcode, syndrome, vendorSyndrome);
        BigEndian.putLongRelease(cq, CqeDescriptor.cqeOffset(cqeIndex, CqeDescriptor.cqeCount(cq)) + TAIL_OFFSET, tail);
    }

    /** The body of an error CQE, as {@link #prepareRequester} does for a requester CQE; returns the tail. */
    public static long prepareError(ByteBuffer cq, long cqeIndex, int cqeOpcode, int qpn, int wqeCounter,
                                    int wqeOpcode, int syndrome, int vendorSyndrome) {
        if (!CqeOpcode.isError(cqeOpcode)) {
            throw new IllegalArgumentException("CQE opcode " + CqeOpcode.name(cqeOpcode) + " is not an error opcode");
        }
        int count = CqeDescriptor.cqeCount(cq);
        int base = CqeDescriptor.cqeOffset(cqeIndex, count);
        clearBody(cq, base);
        cq.put(base + VENDOR_ERR_SYND_OFFSET, (byte) vendorSyndrome);
        cq.put(base + SYNDROME_OFFSET, (byte) syndrome);
        return tail(wqeOpcode, qpn, wqeCounter, CqeDescriptor.opOwn(cqeOpcode, CqeDescriptor.ownerBit(cqeIndex, count)));
    }

    /** Publishes a tail from {@link #prepareRequester}/{@link #prepareError} with a release store. */
    public static void publishTail(ByteBuffer cq, long cqeIndex, long tail) {
        BigEndian.putLongRelease(cq, CqeDescriptor.cqeOffset(cqeIndex, CqeDescriptor.cqeCount(cq)) + TAIL_OFFSET, tail);
    }

    /**
     * The last 8 bytes of a CQE as a long whose big-endian bytes are
     * {@code s_wqe_opcode, qpn (24), wqe_counter (16), signature (0), op_own}.
     */
    public static long tail(int wqeOpcode, int qpn, int wqeCounter, int opOwn) {
        long sopDropQpn = ((long) (wqeOpcode & 0xff) << S_WQE_OPCODE_SHIFT) | (qpn & QPN_MASK);
        long counterSignatureOpOwn = ((long) (wqeCounter & 0xffff) << 16) | (opOwn & 0xff);
        return (sopDropQpn << 32) | counterSignatureOpOwn;
    }

    private static void clearBody(ByteBuffer cq, int base) {
        for (int b = 0; b < TAIL_OFFSET; b += Long.BYTES) {
            BigEndian.putLong(cq, base + b, 0L);
        }
    }
}
