package io.gda4j.mlx5;

/**
 * Why {@link WqeDecoder} refused a WQE, and the error CQE syndrome a NIC model should report for it.
 *
 * <p>{@link #NONE} means the WQE decoded cleanly. The mapping to syndromes follows what mlx5 hardware reports for
 * the same mistakes: a malformed WQE is a local QP operation error, a length that does not fit is a local length
 * error.
 */
public enum WqeFault {
    NONE(null, "well formed"),
    /** The opcode byte is not an mlx5 send opcode. */
    UNKNOWN_OPCODE(CqeSyndrome.LOCAL_QP_OP, "unknown opcode"),
    /** A real mlx5 opcode (SEND, masked atomics) that gda4j neither encodes nor executes. */
    UNSUPPORTED_OPCODE(CqeSyndrome.LOCAL_QP_OP, "opcode not supported by gda4j"),
    /** The opmod byte is not zero for an opcode that takes none. */
    BAD_OPMOD(CqeSyndrome.LOCAL_QP_OP, "opmod not valid for the opcode"),
    /** ds is 0, larger than the ring, or not the segment count of the opcode's shape. */
    BAD_DS(CqeSyndrome.LOCAL_QP_OP, "ds does not match the opcode's segments"),
    /** The ctrl segment's WQE index is not the counter the WQE was expected at: a stale or unwritten slot. */
    WQE_INDEX_MISMATCH(CqeSyndrome.LOCAL_QP_OP, "WQE index differs from the expected producer counter"),
    /** The ctrl segment names another QP. */
    QPN_MISMATCH(CqeSyndrome.LOCAL_QP_OP, "QP number differs from the QP that was rung"),
    /** An inline segment where the opcode needs a pointer (READ, atomics). */
    INLINE_NOT_ALLOWED(CqeSyndrome.LOCAL_QP_OP, "inline data with an opcode that needs a data segment"),
    /** The inline byte count runs past the segments that ds gives the WQE. */
    INLINE_BEYOND_WQE(CqeSyndrome.LOCAL_LENGTH, "inline length runs past the end of the WQE"),
    /** An ATOMIC_FA / ATOMIC_CS data segment whose byte count is not 8. */
    BAD_ATOMIC_LENGTH(CqeSyndrome.LOCAL_LENGTH, "atomic data segment is not 8 bytes");

    private final CqeSyndrome syndrome;
    private final String description;

    WqeFault(CqeSyndrome syndrome, String description) {
        this.syndrome = syndrome;
        this.description = description;
    }

    /** The syndrome of the error CQE this fault turns into; null for {@link #NONE}. */
    public CqeSyndrome syndrome() {
        return syndrome;
    }

    /** A short lower-case phrase for messages. */
    public String description() {
        return description;
    }
}
