package io.gda4j.world;

/** What a signal does to the peer's 64-bit word; codes are the {@code SIGNAL_*} constants of view.cuh. */
public enum SignalOp {
    SET(0), ADD(1);

    private final int code;

    SignalOp(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }
}
