package io.gda4j.samples;

/**
 * The record the benchmark kernels' payload check counts into ({@code device-ptx/kernels/payload_check.cuh}, same
 * names, same values), 24 bytes at {@link #RECORD_OFFSET} of a rank's scratch:
 *
 * <pre>
 *   0               8               16              24
 *   +---------------+---------------+---------------+
 *   | mismatches    | first         | rounds        |
 *   +---------------+---------------+---------------+
 * </pre>
 *
 * {@code mismatches}: 8-byte words that differed (a partial last word counts as one), over every round checked;
 * {@code first}: {@code (round << FIRST_ROUND_SHIFT) | byte offset} of the earliest mismatch, all ones when none
 * ({@link #NO_MISMATCH}); {@code rounds}: the rounds (or repetitions) compared. The host zeroes it, with
 * {@code first} at {@link #NO_MISMATCH}, before a checked launch.
 */
final class PayloadCheckDescriptor {
    static final int RECORD_OFFSET = 64;
    static final int MISMATCHES_OFFSET = 0;
    static final int FIRST_OFFSET = 8;
    static final int ROUNDS_OFFSET = 16;
    static final int SIZE = 24;
    static final int FIRST_ROUND_SHIFT = 36;
    static final long NO_MISMATCH = -1L;
    static final long ROLE_INITIATOR = 0;
    static final long ROLE_RESPONDER = 1;

    private PayloadCheckDescriptor() {
    }

    /** The seed of round {@code round} sent by {@code role} in run {@code salt}, as {@code payload_seed} makes it. */
    static long seed(long salt, long round, long role) {
        return (salt << 40) ^ (round << 1) ^ role;
    }

    static long roundOf(long first) {
        return first >>> FIRST_ROUND_SHIFT;
    }

    static long offsetOf(long first) {
        return first & ((1L << FIRST_ROUND_SHIFT) - 1);
    }
}
