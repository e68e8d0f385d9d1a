package io.gda4j.nic;

/**
 * The states of an RC queue pair ({@code IBV_QPS_*}, without SQE) and the moves between them that verbs allows.
 * gda4j's {@link NicQp#connect} walks RESET, INIT, RTR, RTS; after an error the only way back is
 * ERROR, RESET, INIT, RTR, RTS (where a NIC supports it: the emulated NIC does).
 */
public enum QpState {
    /** Created or reset, not connected: the send queue is off and a doorbell rung now is dropped, never replayed. */
    RESET,
    /** Access flags and port set; still no traffic: a doorbell rung now is dropped. */
    INIT,
    /** Ready to receive: the QP answers its peer's requests, but its own send queue is still off. */
    RTR,
    /** Ready to send: WQEs rung now are executed. */
    RTS,
    /**
     * Send queue drained: WQEs already started complete, doorbells are taken but nothing new starts until the QP
     * moves back to RTS; it still answers its peer.
     */
    SQD,
    /**
     * A WQE failed (its CQE says why), or the QP was the responder of a request that failed at its side: every later
     * WQE completes with {@code WR_FLUSH} without being executed, and requests from the peer are dropped.
     */
    ERROR;

    /** Whether verbs allows {@code ibv_modify_qp} from this state to {@code to}. */
    public boolean canMoveTo(QpState to) {
        if (to == RESET || to == ERROR) {
            return true;
        }
        return switch (this) {
            case RESET -> to == INIT;
            case INIT -> to == INIT || to == RTR;
            case RTR -> to == RTS;
            case RTS -> to == RTS || to == SQD;
            case SQD -> to == SQD || to == RTS;
            case ERROR -> false;
        };
    }

    /** Whether a QP in this state answers requests from its connected peer (RTR and later, not ERROR). */
    public boolean responds() {
        return this == RTR || this == RTS || this == SQD;
    }
}
