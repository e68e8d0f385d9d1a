package io.gda4j.mlx5;

/**
 * One CQE as {@link CqeDecoder} read it.
 *
 * @param cqeOpcode      {@link CqeOpcode} value
 * @param owner          the owner bit
 * @param qpn            24-bit QP number
 * @param wqeCounter     low 16 bits of the counter of the WQE this CQE completes (the last one, for unsignaled runs)
 * @param wqeOpcode      {@link Mlx5Opcode} of that WQE (requester CQEs)
 * @param byteCount      byte_cnt (requester: bytes read by RDMA_READ, 8 for atomics)
 * @param syndrome       {@link CqeSyndrome} code, error CQEs only (else 0)
 * @param vendorSyndrome vendor syndrome, error CQEs only (else 0)
 */
public record DecodedCqe(int cqeOpcode, int owner, int qpn, int wqeCounter, int wqeOpcode, int byteCount,
                         int syndrome, int vendorSyndrome) {

    /** Whether this CQE reports a failed WQE. */
    public boolean isError() {
        return CqeOpcode.isError(cqeOpcode);
    }

    /** Throws {@link CompletionErrorException} when this CQE reports a failure; otherwise returns it. */
    public DecodedCqe requireSuccess() {
        if (isError()) {
            throw new CompletionErrorException(this);
        }
        return this;
    }
}
