package io.gda4j.mlx5;

/**
 * Error CQE syndromes ({@code MLX5_CQE_SYNDROME_*} in mlx5dv.h, byte {@link CqeDescriptor#SYNDROME_OFFSET} of an
 * error CQE), each with the sentence a person needs to find the cause.
 */
public enum CqeSyndrome {
    LOCAL_LENGTH(0x01, "a local length error: the data segment does not match the operation (an atomic's is not"
            + " 8 bytes, an inline payload runs past its WQE, or a message exceeds the receive buffer)"),
    LOCAL_QP_OP(0x02, "a local QP operation error: the WQE is malformed for this QP (unknown opcode, wrong ds or"
            + " segments, stale WQE index) or the QP is not in a state that can send"),
    LOCAL_PROT(0x04, "a local protection error: the lkey is wrong, the local address lies outside that MR, or the"
            + " MR lacks local write for the READ/atomic result"),
    WR_FLUSH(0x05, "flushed: the QP had already gone to the error state after an earlier failure; the first error"
            + " CQE on this QP says why"),
    MW_BIND(0x06, "a memory window bind failed"),
    BAD_RESP(0x10, "the responder sent a response the requester did not expect"),
    LOCAL_ACCESS(0x11, "a local access error: a protection error on a local buffer while the response was written"),
    REMOTE_INVAL_REQ(0x12, "the responder rejected the request as invalid: an opcode it does not accept (atomics"
            + " not enabled on its QP), a length beyond its limits, or an unaligned atomic address"),
    REMOTE_ACCESS(0x13, "the rkey or remote address is wrong, or the remote MR lacks the access right"),
    REMOTE_OP(0x14, "the responder could not complete the operation (its QP or memory failed during it)"),
    TRANSPORT_RETRY_EXC(0x15, "no acknowledgement after retry_cnt retries: the peer QP is not in RTR/RTS, the path"
            + " (LID/GID, MTU, port) is wrong, or the link is down"),
    RNR_RETRY_EXC(0x16, "the peer had no receive WQE posted (receiver not ready) after rnr_retry retries"),
    REMOTE_ABORTED(0x22, "the responder aborted the operation");

    private static final CqeSyndrome[] BY_CODE = new CqeSyndrome[256];

    static {
        for (CqeSyndrome syndrome : values()) {
            BY_CODE[syndrome.code] = syndrome;
        }
    }

    private final int code;
    private final String meaning;

    CqeSyndrome(int code, String meaning) {
        this.code = code;
        this.meaning = meaning;
    }

    /** The syndrome byte as the NIC writes it. */
    public int code() {
        return code;
    }

    /** What the syndrome usually means, as a clause that can follow "this is". */
    public String meaning() {
        return meaning;
    }

    /** The syndrome with this code, or null for a code mlx5dv.h does not name. */
    public static CqeSyndrome fromCode(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }

    /** {@code "REMOTE_ACCESS (0x13)"}, or {@code "0x42 (unknown)"}; never null. */
    public static String describe(int code) {
        CqeSyndrome syndrome = fromCode(code);
        return syndrome != null ? String.format("%s (0x%02x)", syndrome.name(), code)
                : String.format("0x%02x (unknown)", code);
    }
}
