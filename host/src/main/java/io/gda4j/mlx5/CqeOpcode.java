package io.gda4j.mlx5;

/**
 * CQE opcodes: the high nibble of a CQE's {@code op_own} ({@code MLX5_CQE_*} in mlx5dv.h).
 */
public final class CqeOpcode {
    /** A send-side WQE completed. */
    public static final int REQ = 0;
    public static final int RESP_WR_IMM = 1;
    public static final int RESP_SEND = 2;
    public static final int RESP_SEND_IMM = 3;
    public static final int RESP_SEND_INV = 4;
    public static final int RESIZE_CQ = 5;
    public static final int NO_PACKET = 6;
    public static final int SIG_ERR = 12;
    /** A send-side WQE failed: an error CQE with a syndrome. */
    public static final int REQ_ERR = 13;
    /** A receive-side WQE failed: an error CQE with a syndrome. */
    public static final int RESP_ERR = 14;
    /** Never written by hardware: marks a CQE that software initialised and nobody has written yet. */
    public static final int INVALID = 15;

    private static final String[] NAMES = new String[16];

    static {
        NAMES[REQ] = "REQ";
        NAMES[RESP_WR_IMM] = "RESP_WR_IMM";
        NAMES[RESP_SEND] = "RESP_SEND";
        NAMES[RESP_SEND_IMM] = "RESP_SEND_IMM";
        NAMES[RESP_SEND_INV] = "RESP_SEND_INV";
        NAMES[RESIZE_CQ] = "RESIZE_CQ";
        NAMES[NO_PACKET] = "NO_PACKET";
        NAMES[SIG_ERR] = "SIG_ERR";
        NAMES[REQ_ERR] = "REQ_ERR";
        NAMES[RESP_ERR] = "RESP_ERR";
        NAMES[INVALID] = "INVALID";
    }

    private CqeOpcode() {
    }

    /** Whether a CQE with this opcode reports a failed WQE and carries a syndrome. */
    public static boolean isError(int cqeOpcode) {
        return cqeOpcode == REQ_ERR || cqeOpcode == RESP_ERR;
    }

    /** The opcode's name, or {@code "7 (unknown)"}; never null. */
    public static String name(int cqeOpcode) {
        return cqeOpcode >= 0 && cqeOpcode < NAMES.length && NAMES[cqeOpcode] != null ? NAMES[cqeOpcode]
                : cqeOpcode + " (unknown)";
    }
}
