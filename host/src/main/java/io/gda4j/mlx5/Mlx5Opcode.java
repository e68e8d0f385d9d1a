package io.gda4j.mlx5;

/**
 * Send WQE opcodes (the low byte of the ctrl segment's {@code opmod_idx_opcode}) and their opmods.
 *
 * <p>Values are rdma-core's {@code MLX5_OPCODE_*} from {@code <infiniband/mlx5dv.h>}; the golden test compiles
 * against that header and fails if one differs. The masked-atomic opmods are not in mlx5dv.h: they come from the
 * PRM (opmod = 0x08 | (log2(operand bytes) - 2)), as UCX writes them.
 */
public final class Mlx5Opcode {
    public static final int NOP = 0x00;
    public static final int RDMA_WRITE = 0x08;
    public static final int RDMA_WRITE_IMM = 0x09;
    public static final int SEND = 0x0a;
    public static final int SEND_IMM = 0x0b;
    public static final int RDMA_READ = 0x10;
    public static final int ATOMIC_CS = 0x11;
    public static final int ATOMIC_FA = 0x12;
    public static final int ATOMIC_MASKED_CS = 0x14;
    public static final int ATOMIC_MASKED_FA = 0x15;

    /** Opmod of a masked atomic on a 4-byte operand. */
    public static final int OPMOD_MASKED_ATOMIC_4_BYTES = 0x08;
    /** Opmod of a masked atomic on an 8-byte operand. */
    public static final int OPMOD_MASKED_ATOMIC_8_BYTES = 0x09;

    private static final String[] NAMES = new String[256];

    static {
        NAMES[NOP] = "NOP";
        NAMES[RDMA_WRITE] = "RDMA_WRITE";
        NAMES[RDMA_WRITE_IMM] = "RDMA_WRITE_IMM";
        NAMES[SEND] = "SEND";
        NAMES[SEND_IMM] = "SEND_IMM";
        NAMES[RDMA_READ] = "RDMA_READ";
        NAMES[ATOMIC_CS] = "ATOMIC_CS";
        NAMES[ATOMIC_FA] = "ATOMIC_FA";
        NAMES[ATOMIC_MASKED_CS] = "ATOMIC_MASKED_CS";
        NAMES[ATOMIC_MASKED_FA] = "ATOMIC_MASKED_FA";
    }

    private Mlx5Opcode() {
    }

    /** Whether {@code opcode} is one of the opcodes named here (known to mlx5, not necessarily executed by gda4j). */
    public static boolean isKnown(int opcode) {
        return opcode >= 0 && opcode < NAMES.length && NAMES[opcode] != null;
    }

    /** The opcode's name, or {@code "0x1f (unknown)"} style text for any other value; never null. */
    public static String name(int opcode) {
        return isKnown(opcode) ? NAMES[opcode] : String.format("0x%02x (unknown)", opcode);
    }
}
