package io.gda4j.mlx5;

/**
 * A CQE reported a failed work request. The message names the QP, the WQE index, the WQE opcode and the syndrome,
 * and says what the syndrome usually means, e.g.
 * <pre>
 * RDMA completion error on QP 0x00012a, WQE index 42 (RDMA_WRITE): REMOTE_ACCESS (0x13), vendor syndrome 0x88,
 * REQ_ERR CQE. Usually: the rkey or remote address is wrong, or the remote MR lacks the access right.
 * </pre>
 */
public final class CompletionErrorException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final transient DecodedCqe cqe;

    public CompletionErrorException(DecodedCqe cqe) {
        super(message(cqe));
        this.cqe = cqe;
    }

    /** The error CQE. */
    public DecodedCqe cqe() {
        return cqe;
    }

    public int qpn() {
        return cqe.qpn();
    }

    /** Low 16 bits of the failed WQE's counter. */
    public int wqeIndex() {
        return cqe.wqeCounter();
    }

    public int wqeOpcode() {
        return cqe.wqeOpcode();
    }

    /** The syndrome, or null when the code is not one mlx5dv.h names. */
    public CqeSyndrome syndrome() {
        return CqeSyndrome.fromCode(cqe.syndrome());
    }

    static String message(DecodedCqe cqe) {
        CqeSyndrome syndrome = CqeSyndrome.fromCode(cqe.syndrome());
        String meaning = syndrome != null ? syndrome.meaning()
                : "a syndrome mlx5dv.h does not name; quote the vendor syndrome to the NIC vendor";
        return String.format("RDMA completion error on QP 0x%06x, WQE index %d (%s): %s, vendor syndrome 0x%02x,"
                        + " %s CQE. Usually: %s.", cqe.qpn(), cqe.wqeCounter(), Mlx5Opcode.name(cqe.wqeOpcode()),
                CqeSyndrome.describe(cqe.syndrome()), cqe.vendorSyndrome(), CqeOpcode.name(cqe.cqeOpcode()),
                meaning);
    }
}
