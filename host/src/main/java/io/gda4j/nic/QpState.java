package io.gda4j.nic;

/** The states of an RC queue pair a user of a {@link NicQp} can observe (the {@code IBV_QPS_*} subset). */
public enum QpState {
    /** Created, not connected. */
    RESET,
    /** Connected and able to send: WQEs posted now are executed. */
    RTS,
    /**
     * A WQE failed (its CQE says why); every later WQE completes with {@code WR_FLUSH} without being executed. Only
     * closing the QP leaves this state (gda4j does not reset and reconnect QPs).
     */
    ERROR
}
