package io.gda4j.nic.emulated;

import io.gda4j.mlx5.CqeSyndrome;

/**
 * Why the emulated NIC failed a WQE: the {@code vendor_err_synd} byte of its error CQE (0xd1..0xd2 and 0xe1..0xef,
 * ranges real mlx5 firmware does not use for these), next to the mlx5 syndrome a real NIC would report for the same mistake.
 */
public enum EmulatedFault {
    /** The WQE is malformed; the syndrome is the decoder's ({@code io.gda4j.mlx5.WqeFault#syndrome()}). */
    MALFORMED_WQE(0xe1, null, "malformed WQE"),
    /** A data segment's lkey names no registered region. */
    UNKNOWN_LKEY(0xe2, CqeSyndrome.LOCAL_PROT, "the lkey names no registered region"),
    /** The local address range lies outside the lkey's region. */
    LOCAL_OUT_OF_RANGE(0xe3, CqeSyndrome.LOCAL_PROT, "the local address range lies outside the lkey's region"),
    /** A READ or atomic result would land in a region without LOCAL_WRITE. */
    LOCAL_NO_WRITE(0xe4, CqeSyndrome.LOCAL_PROT, "the local region lacks LOCAL_WRITE for the READ/atomic result"),
    /** The rkey names no registered region (or the null region, which has no remote side). */
    UNKNOWN_RKEY(0xe5, CqeSyndrome.REMOTE_ACCESS, "the rkey names no registered region"),
    /** The remote address range lies outside the rkey's region. */
    REMOTE_OUT_OF_RANGE(0xe6, CqeSyndrome.REMOTE_ACCESS, "the remote address range lies outside the rkey's region"),
    /** The remote region lacks REMOTE_WRITE, REMOTE_READ or REMOTE_ATOMIC for the operation. */
    REMOTE_NO_ACCESS(0xe7, CqeSyndrome.REMOTE_ACCESS, "the remote region lacks the access right the operation needs"),
    /** An atomic's remote address is not 8-byte aligned. */
    MISALIGNED_ATOMIC(0xe8, CqeSyndrome.REMOTE_INVAL_REQ, "the atomic's remote address is not 8-byte aligned"),
    /**
     * The peer did not answer within the transport retry time: the QP is not connected, or its peer QP is closed,
     * not yet ready to receive, in error, or connected to another QP.
     */
    PEER_UNREACHABLE(0xe9, CqeSyndrome.TRANSPORT_RETRY_EXC,
            "the peer QP did not answer (not connected, closed, not ready, in error or connected elsewhere)"),
    /** RDMA_WRITE_IMM consumes a receive WQE, and emulated QPs have no receive queue. */
    NO_RECEIVE_QUEUE(0xea, CqeSyndrome.RNR_RETRY_EXC, "WRITE_IMM needs a receive WQE; emulated QPs have none"),
    /** The doorbell record covers only part of this WQE's WQEBBs. */
    PARTIAL_WQE(0xeb, CqeSyndrome.LOCAL_QP_OP, "the doorbell ends inside the WQE"),
    /** The platform (CUDA) refused the operation. */
    EXECUTOR_FAILED(0xec, CqeSyndrome.REMOTE_OP, "the CUDA operation carrying out the WQE failed"),
    /**
     * The doorbell word is not {@code {BE32(pi << 8), BE32(qpn << 8)}} for this QP: another QP's number, opcode or ds
     * bits set, the wrong byte order. The QP stops (a real NIC would ring another QP or drop it).
     */
    DOORBELL_MALFORMED(0xed, CqeSyndrome.LOCAL_QP_OP, "the doorbell is mis-encoded or names another QP"),
    /** The doorbell's producer index goes backwards, or runs more than the send queue ahead of the executed WQEs. */
    DOORBELL_OUT_OF_RANGE(0xee, CqeSyndrome.LOCAL_QP_OP,
            "the doorbell's producer index goes backwards or runs past the send queue"),
    /** The doorbell names WQEs the doorbell record does not cover yet: it was rung before the record was stored. */
    DOORBELL_AHEAD_OF_RECORD(0xef, CqeSyndrome.LOCAL_QP_OP,
            "the doorbell was rung before the doorbell record covered its WQEs"),
    /** The responder QP's own access flags ({@code qp_access_flags}) do not allow the operation. */
    QP_NO_ACCESS(0xd1, CqeSyndrome.REMOTE_INVAL_REQ, "the responder QP's access flags do not allow the operation"),
    /** More READs and atomics in flight than the responder QP's {@code max_dest_rd_atomic} takes. */
    RD_ATOMIC_EXCEEDED(0xd2, CqeSyndrome.REMOTE_INVAL_REQ,
            "more READs/atomics in flight than the responder's max_dest_rd_atomic"),
    /** Flushed after an earlier error on the QP. */
    FLUSHED(0x00, CqeSyndrome.WR_FLUSH, "flushed after an earlier error");

    private final int vendorSyndrome;
    private final CqeSyndrome syndrome;
    private final String description;

    EmulatedFault(int vendorSyndrome, CqeSyndrome syndrome, String description) {
        this.vendorSyndrome = vendorSyndrome;
        this.syndrome = syndrome;
        this.description = description;
    }

    /** The CQE's vendor syndrome byte. */
    public int vendorSyndrome() {
        return vendorSyndrome;
    }

    /** The mlx5 syndrome; null for {@link #MALFORMED_WQE}, whose syndrome depends on the decoder fault. */
    public CqeSyndrome syndrome() {
        return syndrome;
    }

    public String description() {
        return description;
    }

    /** The fault with this vendor syndrome, or null (0 and foreign values: not an emulated-NIC explanation). */
    public static EmulatedFault ofVendorSyndrome(int vendorSyndrome) {
        for (EmulatedFault f : values()) {
            if (f.vendorSyndrome == vendorSyndrome && f != FLUSHED) {
                return f;
            }
        }
        return null;
    }
}
