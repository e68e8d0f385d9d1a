package io.gda4j.samples;

import io.gda4j.mlx5.RequiresCompilers;
import io.gda4j.world.HeaderValues;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The payload check of {@code gda4j latency} and {@code bandwidth} without a GPU: {@code payload_check.cuh} built for
 * the host with g++ ({@code payload_check.cpp}) fills and compares payloads over many sizes and lane counts (intact
 * copies pass; a flipped byte, a stale round, the other sender's payload and a shifted copy are caught where they
 * are), its record's layout is {@link PayloadCheckDescriptor}'s, and the host side turns a record into the refusal.
 */
@RequiresCompilers(tools = "g++")
class PayloadCheckHostTest {
    @Test
    void theDeviceCheckCatchesWhatDidNotArriveAndTheLayoutsAgree(@TempDir Path tmp) throws Exception {
        Map<String, Long> v = HeaderValues.of("payload_check.cpp", tmp);
        assertEquals(0L, v.get("failures"), () -> v.get("failures") + " of " + v.get("cases") + " cases wrong; the first"
                + " at size " + v.get("first_failure_size") + ", kind " + v.get("first_failure_kind") + " (0/1 fill, 2"
                + " intact copy refused, 3 flipped byte, 4 other seed, 5 shifted copy)");
        assertTrue(v.get("cases") > 4 * 80 * 6, "cases run: " + v.get("cases"));
        assertEquals(PayloadCheckDescriptor.RECORD_OFFSET, v.get("RECORD_OFFSET"));
        assertEquals(PayloadCheckDescriptor.MISMATCHES_OFFSET, v.get("MISMATCHES_OFFSET"));
        assertEquals(PayloadCheckDescriptor.FIRST_OFFSET, v.get("FIRST_OFFSET"));
        assertEquals(PayloadCheckDescriptor.ROUNDS_OFFSET, v.get("ROUNDS_OFFSET"));
        assertEquals(PayloadCheckDescriptor.SIZE, v.get("SIZE"));
        assertEquals(PayloadCheckDescriptor.FIRST_ROUND_SHIFT, v.get("FIRST_ROUND_SHIFT"));
        assertEquals(PayloadCheckDescriptor.NO_MISMATCH, v.get("NO_MISMATCH"));
        assertEquals(PayloadCheckDescriptor.ROLE_INITIATOR, v.get("ROLE_INITIATOR"));
        assertEquals(PayloadCheckDescriptor.ROLE_RESPONDER, v.get("ROLE_RESPONDER"));
        assertEquals(PayloadCheckDescriptor.seed(3, 5, PayloadCheckDescriptor.ROLE_RESPONDER), v.get("seed_3_5_1"),
                "the host's seed is the kernels' (bandwidth --check fills with it)");
        long key = v.get("first_key_17_4096");
        assertEquals(17, PayloadCheckDescriptor.roundOf(key));
        assertEquals(4096, PayloadCheckDescriptor.offsetOf(key));
        // The record fits the rank's 256-byte scratch, past the status word.
        assertTrue(PayloadCheckDescriptor.RECORD_OFFSET >= 8 && PayloadCheckDescriptor.RECORD_OFFSET
                + PayloadCheckDescriptor.SIZE <= 256);
    }

    @Test
    void aRecordBecomesOneLineNamingReceiverSenderRoundAndByte() {
        long first = (17L << PayloadCheckDescriptor.FIRST_ROUND_SHIFT) | 4096;
        PayloadCheck.Result bad = new PayloadCheck.Result(1, 12, first, 1100);
        PayloadCheck.MismatchException e = assertThrows(PayloadCheck.MismatchException.class,
                () -> PayloadCheck.requireIntact(List.of(new PayloadCheck.Result(0, 0, PayloadCheckDescriptor
                        .NO_MISMATCH, 1100), bad), "put_signal warp-scope payloads", 8192, r -> r == 1 ? 0 : 1));
        assertEquals("the payload check failed: rank 1 received put_signal warp-scope payloads of 8 KiB that differ"
                + " from what rank 0 sent: 12 8-byte words over 1100 checked rounds, the first at byte 4096 of round 17;"
                + " the transport lost, reordered or misplaced data (the timings of this run cannot be trusted)",
                e.getMessage());
        PayloadCheck.requireIntact(List.of(new PayloadCheck.Result(1, 0, PayloadCheckDescriptor.NO_MISMATCH, 5)), "x",
                8, r -> 0); // intact: no exception
    }

    /** Across processes each one's results travel on the all-gather: what one process encodes, all decode. */
    @Test
    void resultsSurviveTheExchangeBetweenProcesses() {
        List<PayloadCheck.Result> a = List.of(new PayloadCheck.Result(0, 0, -1, 10));
        List<PayloadCheck.Result> b = List.of(new PayloadCheck.Result(1, 3, 77, 10));
        List<PayloadCheck.Result> all = PayloadCheck.decodeAll(new byte[][] {PayloadCheck.encode(a),
            PayloadCheck.encode(List.of()), PayloadCheck.encode(b)});
        assertEquals(List.of(a.get(0), b.get(0)), all);
    }

    @Test
    void theCheckIsOnByDefaultAndEitherOptionMayBeGiven() {
        org.apache.commons.cli.Options o = new org.apache.commons.cli.Options();
        PayloadCheck.addOptions(o);
        assertTrue(PayloadCheck.enabled(parse(o)));
        assertTrue(PayloadCheck.enabled(parse(o, "--check")));
        assertEquals(false, PayloadCheck.enabled(parse(o, "--no-check")));
        assertThrows(UsageException.class, () -> PayloadCheck.enabled(parse(o, "--check", "--no-check")));
    }

    private static org.apache.commons.cli.CommandLine parse(org.apache.commons.cli.Options o, String... args) {
        try {
            return Main.parser().parse(o, args);
        } catch (org.apache.commons.cli.ParseException e) {
            throw new AssertionError(e);
        }
    }
}
