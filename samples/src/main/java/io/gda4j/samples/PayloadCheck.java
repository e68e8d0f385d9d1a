package io.gda4j.samples;

import io.gda4j.cuda.DeviceMemory;
import io.gda4j.world.ByteSize;
import io.gda4j.world.ProcessWorld;
import io.gda4j.world.World;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Option;
import org.apache.commons.cli.Options;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code --check} of {@code gda4j latency}, {@code bandwidth} and {@code compare}: every payload a benchmark sends is
 * a pattern of its own (per round and sender, {@code payload_check.cuh}) and the receiver compares what arrived with
 * it, outside the timed region: in the ping-pong before the initiator's timer starts and after it stops (the
 * responder's compare overlaps the initiator's), in the bandwidth run between the event-timed launches. On by
 * default; {@code --no-check} leaves it out (to measure what it costs).
 */
final class PayloadCheck {
    private PayloadCheck() {
    }

    /**
     * What one rank's record says.
     *
     * @param rank       the receiving rank
     * @param mismatches 8-byte words that differed
     * @param first      the earliest mismatch's key ({@link PayloadCheckDescriptor#NO_MISMATCH} when none)
     * @param rounds     rounds compared
     */
    record Result(int rank, long mismatches, long first, long rounds) {
        static final int ENCODED_BYTES = 4 + 3 * 8;

        boolean intact() {
            return mismatches == 0;
        }

        /** The record in {@code scratch} of rank {@code rank}. */
        static Result read(int rank, DeviceMemory scratch) {
            int at = PayloadCheckDescriptor.RECORD_OFFSET;
            return new Result(rank, scratch.readLong(at + PayloadCheckDescriptor.MISMATCHES_OFFSET),
                    scratch.readLong(at + PayloadCheckDescriptor.FIRST_OFFSET),
                    scratch.readLong(at + PayloadCheckDescriptor.ROUNDS_OFFSET));
        }

        void encode(ByteBuffer b) {
            b.putInt(rank).putLong(mismatches).putLong(first).putLong(rounds);
        }

        static Result decode(ByteBuffer b) {
            return new Result(b.getInt(), b.getLong(), b.getLong(), b.getLong());
        }

        /** The refusal: who received what from whom, how much differed and where first. */
        String problem(String what, int sender, long bytes) {
            long round = PayloadCheckDescriptor.roundOf(first);
            long offset = PayloadCheckDescriptor.offsetOf(first);
            return String.format(Locale.ROOT, "the payload check failed: rank %d received %s of %s that differ from"
                    + " what rank %d sent: %d 8-byte word%s over %d checked round%s, the first at byte %d of round %d;"
                    + " the transport lost, reordered or misplaced data (the timings of this run cannot be trusted)",
                    rank, what, ByteSize.format(bytes), sender, mismatches, mismatches == 1 ? "" : "s", rounds,
                    rounds == 1 ? "" : "s", offset, round);
        }
    }

    /** A payload that did not arrive as sent: the run fails with exit 1 (the message says where). */
    static final class MismatchException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        MismatchException(String message) {
            super(message);
        }
    }

    static void addOptions(Options o) {
        o.addOption(Option.builder().longOpt("check").desc("compare every payload that arrives with the pattern its"
                + " sender wrote for that round, outside the timed region (the default)").build());
        o.addOption(Option.builder().longOpt("no-check").desc("leave the payload check out (to measure what it"
                + " costs)").build());
    }

    /** Whether {@code cmd} asks for the check: yes unless {@code --no-check}; both together are refused. */
    static boolean enabled(CommandLine cmd) {
        if (cmd.hasOption("check") && cmd.hasOption("no-check")) {
            throw new UsageException("choose one of --check and --no-check");
        }
        return !cmd.hasOption("no-check");
    }

    /** Zeroes the record in {@code scratch}, {@code first} at "none", before a checked launch. */
    static void reset(DeviceMemory scratch) {
        int at = PayloadCheckDescriptor.RECORD_OFFSET;
        scratch.writeLong(at + PayloadCheckDescriptor.MISMATCHES_OFFSET, 0);
        scratch.writeLong(at + PayloadCheckDescriptor.FIRST_OFFSET, PayloadCheckDescriptor.NO_MISMATCH);
        scratch.writeLong(at + PayloadCheckDescriptor.ROUNDS_OFFSET, 0);
    }

    /**
     * Every rank's result: {@code local} in a world of one process; in a {@link ProcessWorld} the results of every
     * process, exchanged on its all-gather (every process calls this once per checked run, so a mismatch seen by
     * the responder's process fails the measuring process too).
     */
    static List<Result> gather(World world, List<Result> local) {
        if (!(world instanceof ProcessWorld pw)) {
            return local;
        }
        return decodeAll(pw.allGather(encode(local)));
    }

    static byte[] encode(List<Result> results) {
        ByteBuffer b = ByteBuffer.allocate(4 + Result.ENCODED_BYTES * results.size()).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(results.size());
        results.forEach(r -> r.encode(b));
        return b.array();
    }

    static List<Result> decodeAll(byte[][] published) {
        List<Result> all = new ArrayList<>();
        for (byte[] p : published) {
            ByteBuffer b = ByteBuffer.wrap(p).order(ByteOrder.LITTLE_ENDIAN);
            int n = b.getInt();
            for (int i = 0; i < n; i++) {
                all.add(Result.decode(b));
            }
        }
        return all;
    }

    /**
     * Throws {@link MismatchException} for the first result that is not intact; {@code senderOf} gives the rank that
     * sent to a receiving rank.
     */
    static void requireIntact(List<Result> results, String what, long bytes,
                              java.util.function.IntUnaryOperator senderOf) {
        for (Result r : results) {
            if (!r.intact()) {
                throw new MismatchException(r.problem(what, senderOf.applyAsInt(r.rank()), bytes));
            }
        }
    }
}
