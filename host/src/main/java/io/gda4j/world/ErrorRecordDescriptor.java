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

    /**
     * The world's {@code ERROR_*} codes of view.cuh. A transport's codes (in its folder of the device headers) and the
     * MoE's are theirs, worded by the {@link DeviceErrorDecoder} each registers; {@code ErrorRecord.code()} is any of
     * them.
     */
    public enum Code {
        NONE(0), WAIT_TIMEOUT(1), OUT_OF_RANGE(2), BAD_PEER(3),
        /** No back end of the peer's transport serves the call (seen = the peer's transport code). */
        UNSUPPORTED_TRANSPORT(4),
        MISALIGNED(5),
        /** An ADD by a GPU atomic to a rank whose words get NIC atomics, refused: the two are not atomic with each
         * other ({@link AtomicRouting}); cmp = the adding entry's transport. */
        MIXED_ATOMICS(16);

        private final int value;

        Code(int value) {
            this.value = value;
        }

        public int value() {
            return value;
        }

        /** The world's code of that value, or empty for another owner's (or an unknown) code. */
        public static java.util.Optional<Code> of(int value) {
            for (Code c : values()) {
                if (c.value == value) {
                    return java.util.Optional.of(c);
                }
            }
            return java.util.Optional.empty();
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
