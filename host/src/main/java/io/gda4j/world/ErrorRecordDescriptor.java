package io.gda4j.world;

/**
 * Byte layout of the per-rank error record in GPU memory, mirrored by {@code struct ErrorRecord} in
 * {@code gda4j/layout/view.cuh}. The first failing device call claims it (CAS on {@code claimed}), writes the fields,
 * then publishes {@code code}; the host reads it after the kernel returns.
 *
 * <pre>
 *   0        4        8        12       16                24                32                40
 *   +--------+--------+--------+--------+-----------------+-----------------+-----------------+
 *   | code   | rank   | peer   | op     | offset          | expected        | seen            |
 *   +--------+--------+--------+--------+-----------------+-----------------+-----------------+
 *   40                48       52       56       60       64
 *   +-----------------+--------+--------+--------+--------+
 *   | elapsed_ns      | block  | thread | cmp    | claimed|
 *   +-----------------+--------+--------+--------+--------+
 * </pre>
 */
public final class ErrorRecordDescriptor {
    public static final int CODE_OFFSET = 0;
    public static final int RANK_OFFSET = 4;
    public static final int PEER_OFFSET = 8;
    public static final int OP_OFFSET = 12;
    public static final int OFFSET_OFFSET = 16;
    public static final int EXPECTED_OFFSET = 24;
    public static final int SEEN_OFFSET = 32;
    public static final int ELAPSED_NS_OFFSET = 40;
    public static final int BLOCK_OFFSET = 48;
    public static final int THREAD_OFFSET = 52;
    public static final int CMP_OFFSET = 56;
    public static final int CLAIMED_OFFSET = 60;
    public static final int LENGTH = 64;

    /** {@code ERROR_*} codes of view.cuh. */
    public enum Code {
        NONE(0), WAIT_TIMEOUT(1), OUT_OF_RANGE(2), BAD_PEER(3), UNSUPPORTED_TRANSPORT(4), MISALIGNED(5),
        /** No room in a proxy FIFO before the timeout: the host proxy is not popping that channel. */
        PROXY_FIFO_FULL(6),
        /** A flush (or quiet) was not completed by the host proxy before the timeout. */
        PROXY_FLUSH_TIMEOUT(7),
        /** The host proxy serving the channel is stopped or has failed. */
        PROXY_STOPPED(8),
        /** A field does not fit a proxy trigger (offsets and sizes below 2^38). */
        TRIGGER_FIELD(9),
        /** IBGDA: an error CQE (offset = WQE counter, expected = WQE opcode, seen =
         * {@code syndrome | vendor << 8 | CQE opcode << 16}, cmp = QP number). */
        CQE_ERROR(10),
        /** IBGDA: no free send queue slot in time (expected = completions needed, seen = completed, cmp = QPN). */
        SQ_FULL(11),
        /** IBGDA: posting or quiet stalled (expected = counter waited for, seen = counter reached, cmp = QPN). */
        POST_TIMEOUT(12),
        /** IBGDA: an inline payload above the QP's max_inline, refused before posting (expected = bytes, seen =
         * max_inline). */
        INLINE_TOO_LARGE(13),
        /** IBGDA: a SET signal over a NIC that writes with relaxed ordering (cmp = QP number): it could overtake
         * its data. */
        SET_SIGNAL_RELAXED(14),
        /** P2P: an ADD (SIGNAL_ADD, atomic_add) to a peer whose link has no native atomics (PCIe), refused. */
        NO_NATIVE_ATOMICS(15),
        /** An ADD by a GPU atomic (p2p, proxy) to a rank whose words get NIC atomics (it has IBGDA links), refused:
         * the two are not atomic with each other ({@link AtomicRouting}); cmp = the peer's transport. */
        MIXED_ATOMICS(16),
        /** MoE: one rank combines from its heap's combine input and another from a tensor of its own, which cannot
         * mix (expected = this rank's entry word, seen = the peer's: {@code seq << 1 | fromHeap}). */
        COMBINE_INPUT_MIXED(17);

        private final int value;

        Code(int value) {
            this.value = value;
        }

        public int value() {
            return value;
        }

        /** Whether the call gave up waiting (the host reports these as {@link DeviceWaitTimeoutException}). */
        public boolean isTimeout() {
            return this == WAIT_TIMEOUT || this == PROXY_FIFO_FULL || this == PROXY_FLUSH_TIMEOUT;
        }

        public static Code of(int value) {
            for (Code c : values()) {
                if (c.value == value) {
                    return c;
                }
            }
            throw new IllegalArgumentException("unknown error code " + value + " in the device error record");
        }
    }

    /** {@code OP_*} codes of view.cuh: which device API call failed, named as in the device API. */
    public enum Op {
        NONE(0, "none"), PUT(1, "put"), PUT_SIGNAL(2, "put_signal"), SIGNAL(3, "signal"),
        WAIT_UNTIL(4, "wait_until"), FENCE(5, "fence"), QUIET(6, "quiet"), ATOMIC_ADD(7, "atomic_add"),
        PUT_INLINE(8, "put_inline"), FLUSH(9, "flush"), GET(10, "get");

        private final int value;
        private final String apiName;

        Op(int value, String apiName) {
            this.value = value;
            this.apiName = apiName;
        }

        public int value() {
            return value;
        }

        public String apiName() {
            return apiName;
        }

        public static Op of(int value) {
            for (Op o : values()) {
                if (o.value == value) {
                    return o;
                }
            }
            return NONE;
        }
    }

    private ErrorRecordDescriptor() {
    }
}
