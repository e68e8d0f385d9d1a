package io.gda4j.mlx5;

import static io.gda4j.mlx5.CqeDescriptor.BYTE_CNT_OFFSET;
import static io.gda4j.mlx5.CqeDescriptor.QPN_MASK;
import static io.gda4j.mlx5.CqeDescriptor.SYNDROME_OFFSET;
import static io.gda4j.mlx5.CqeDescriptor.S_WQE_OPCODE_SHIFT;
import static io.gda4j.mlx5.CqeDescriptor.TAIL_OFFSET;
import static io.gda4j.mlx5.CqeDescriptor.VENDOR_ERR_SYND_OFFSET;

import java.nio.ByteBuffer;

/**
 * Polls and reads 64-byte mlx5 CQEs. {@link #poll} allocates nothing and never throws for CQE contents, so it can
 * sit in a polling loop; {@link #decode} builds a record for the rarer paths (errors, tests, set-up).
 */
public final class CqeDecoder {
    /** {@link #poll} result: the CQE at this counter has not been written yet. */
    public static final int EMPTY = -1;

    private CqeDecoder() {
    }

    /**
     * The CQE opcode at consumer counter {@code cqeIndex} if the CQE there is new (its opcode is not INVALID and
     * its owner bit matches the ring pass), else {@link #EMPTY}. The tail is loaded with acquire semantics, pairing
     * with the writer's release store of the same 8 bytes, so after a non-EMPTY result the rest of the CQE may be
     * read with plain loads.
     */
    public static int poll(ByteBuffer cq, long cqeIndex) {
        int count = CqeDescriptor.cqeCount(cq);
        long tail = BigEndian.getLongAcquire(cq, CqeDescriptor.cqeOffset(cqeIndex, count) + TAIL_OFFSET);
        int opOwn = (int) tail & 0xff;
        int opcode = CqeDescriptor.opcodeOf(opOwn);
        if (opcode == CqeOpcode.INVALID || CqeDescriptor.ownerOf(opOwn) != CqeDescriptor.ownerBit(cqeIndex, count)) {
            return EMPTY;
        }
        return opcode;
    }

    /** Reads the CQE at consumer counter {@code cqeIndex} whatever its owner bit; call after {@link #poll}. */
    public static DecodedCqe decode(ByteBuffer cq, long cqeIndex) {
        int base = CqeDescriptor.cqeOffset(cqeIndex, CqeDescriptor.cqeCount(cq));
        long tail = BigEndian.getLongAcquire(cq, base + TAIL_OFFSET);
        int sopDropQpn = (int) (tail >>> 32);
        int opOwn = (int) tail & 0xff;
        int opcode = CqeDescriptor.opcodeOf(opOwn);
        boolean error = CqeOpcode.isError(opcode);
        return new DecodedCqe(opcode, CqeDescriptor.ownerOf(opOwn), sopDropQpn & QPN_MASK,
                (int) (tail >>> 16) & 0xffff, sopDropQpn >>> S_WQE_OPCODE_SHIFT,
                BigEndian.getInt(cq, base + BYTE_CNT_OFFSET),
                error ? BigEndian.getUnsignedByte(cq, base + SYNDROME_OFFSET) : 0,
                error ? BigEndian.getUnsignedByte(cq, base + VENDOR_ERR_SYND_OFFSET) : 0);
    }
}
