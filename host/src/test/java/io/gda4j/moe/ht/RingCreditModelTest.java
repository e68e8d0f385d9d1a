package io.gda4j.moe.ht;

import io.gda4j.moe.core.MoeShape;
import io.gda4j.moe.tensor.ElementType;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The combine's ring protocol between one sender and one receiver, as a model in Java, to check the bound
 * {@link HighThroughputPart#ringProblem()} enforces. The sender is {@code GroupSender} (gda4j/moe/ring.cuh): pieces of at most
 * {@code chunk} rows that never wrap the ring, a run announced when whole or before a wait for credits, and a wait
 * until {@code credit >= pos + rows - ring}. The receiver is {@code combine_receive} (kernels/moe_ring.cu): rounds of
 * {@code warps} tokens, each warp waiting for its token's row to be announced, the rows consumed granted back after
 * the round. Both sides only ever raise what the other waits for, so letting each go as far as it can in turn finds
 * a stall if any order of events has one.
 */
class RingCreditModelTest {
    /** Whether the protocol stalls with these sizes, for tokens whose rows from the sender are {@code present}. */
    static boolean stalls(int ring, int chunk, int warps, boolean[] present) {
        return stalls(ring, chunk, warps, present, 1);
    }

    /** As above, with the receiver granting only once {@code batch} consumed rows wait (the rest at the end). */
    static boolean stalls(int ring, int chunk, int warps, boolean[] present, int batch) {
        int rows = 0;
        for (boolean p : present) {
            rows += p ? 1 : 0;
        }
        // Sender state (GroupSender): rows written, the current run's start, rows announced, credit seen.
        long pos = 0;
        long runStart = 0;
        long announced = 0;
        long sent = 0;
        // Receiver state: the next round, rows consumed and granted.
        int round = 0;
        int consumed = 0;
        long credit = 0;
        int rounds = (present.length + warps - 1) / warps;
        while (true) {
            boolean progress = false;
            // The sender goes as far as it can: piece after piece.
            while (sent < rows) {
                long nextRun = pos - runStart >= chunk || pos % ring == 0 ? pos : runStart;
                long room = chunk - (pos - nextRun);
                long piece = Math.min(rows - sent, Math.min(room, ring - pos % ring));
                if (nextRun == pos) {
                    announced = pos;  // begin(): the last run goes out when a new one starts
                }
                if (pos + piece > credit + ring) {
                    announced = pos;  // and before any wait for credits
                    break;
                }
                runStart = nextRun;
                pos += piece;
                sent += piece;
                progress = true;
            }
            if (sent == rows) {
                announced = pos;  // finish()
            }
            // The receiver goes as far as it can: round after round, each once all its rows were announced.
            while (round < rounds) {
                int first = round * warps;
                int last = Math.min(present.length, first + warps);
                int need = consumed;
                for (int t = first; t < last; t++) {
                    need += present[t] ? 1 : 0;
                }
                if (need > announced) {
                    break;
                }
                consumed = need;
                round++;
                if (consumed - credit >= batch || round == rounds) {
                    credit = consumed;  // the grant after the round
                }
                progress = true;
            }
            if (round == rounds && sent == rows) {
                return false;
            }
            if (!progress) {
                return true;
            }
        }
    }

    private static boolean[] all(int tokens) {
        boolean[] p = new boolean[tokens];
        java.util.Arrays.fill(p, true);
        return p;
    }

    /**
     * {@code tokens} tokens, all with a row except {@code warps - lead} of the first round's: the rounds after it
     * start {@code lead} rows into the ring, so every alignment of rounds against the sender's pieces comes up.
     */
    private static boolean[] leading(int tokens, int warps, int lead) {
        boolean[] p = all(tokens);
        for (int t = lead; t < Math.min(warps, tokens); t++) {
            p[t] = false;
        }
        return p;
    }

    /** The high-throughput part of a config with these ring sizes (hidden 128, top-1 of 4, BF16, one channel). */
    private static HighThroughputPart part(int maxTokensPerRank, int ring, int chunk, int warps) {
        return new HighThroughputPart(new MoeShape(128, maxTokensPerRank, 4, 1, ElementType.BF16), 1, chunk, ring,
                warps, false, MoeRowPath.SM);
    }

    @Test
    void noStallWithinTheBoundAndAStallPastIt() {
        for (int ring = 1; ring <= 40; ring++) {
            for (int chunk = 1; chunk <= ring; chunk++) {
                for (int warps = 1; warps <= Math.min(ring, 16); warps++) {
                    HighThroughputPart c = part(64, ring, chunk, warps);
                    boolean stalled = false;
                    for (int lead = 0; lead <= warps && !stalled; lead++) {
                        for (int tokens = 1; tokens <= 3 * ring + 2 * warps && !stalled; tokens++) {
                            stalled = stalls(ring, chunk, warps, leading(tokens, warps, lead));
                        }
                    }
                    String what = "ring " + ring + ", chunk " + chunk + ", combine warps " + warps;
                    if (c.ringProblem() == null) {
                        assertFalse(stalled, what + " passes the check but can stall");
                    } else {
                        assertTrue(stalled, what + " is refused but never stalls here: the check is too strict");
                    }
                }
            }
        }
    }

    @Test
    void theSmallestStall() {
        // A ring of 4 rows, chunks of 4, rounds of 3: the round of rows 3..5 holds row 3 while the sender needs slot 3
        // back before it writes the chunk of rows 4..7.
        assertTrue(stalls(4, 4, 3, all(8)));
        assertFalse(stalls(4, 2, 3, all(8)));
        assertEquals(null, part(8, 4, 2, 3).ringProblem());
    }

    /** grant_batch (gda4j/moe/ring.cuh): the rows a combine receiver may hold back before it grants them. */
    private static int grantBatch(int ring, int chunk, int warps) {
        return Math.max(1, Math.min(chunk, ring - chunk - warps + 1));
    }

    @Test
    void batchedGrantsStallNoConfigTheCheckAllows() {
        for (int ring = 1; ring <= 40; ring++) {
            for (int chunk = 1; chunk <= ring; chunk++) {
                for (int warps = 1; warps <= Math.min(ring, 16) && chunk + warps - 1 <= ring; warps++) {
                    int batch = grantBatch(ring, chunk, warps);
                    for (int lead = 0; lead <= warps; lead++) {
                        for (int tokens = 1; tokens <= 3 * ring + 2 * warps; tokens++) {
                            assertFalse(stalls(ring, chunk, warps, leading(tokens, warps, lead), batch),
                                    "ring " + ring + ", chunk " + chunk + ", combine warps " + warps + ", batch "
                                            + batch + ", " + tokens + " tokens, lead " + lead);
                        }
                    }
                }
            }
        }
        // Past the bound a stall comes: ring 8, chunk 4, 1 warp (grant_batch 4, a row short of the exact bound), and
        // some larger batch stalls.
        assertEquals(4, grantBatch(8, 4, 1));
        boolean stalled = false;
        for (int batch = 5; batch <= 8 && !stalled; batch++) {
            for (int lead = 0; lead <= 1 && !stalled; lead++) {
                for (int tokens = 1; tokens <= 40 && !stalled; tokens++) {
                    stalled = stalls(8, 4, 1, leading(tokens, 1, lead), batch);
                }
            }
        }
        assertTrue(stalled, "a batch past the bound should stall somewhere");
    }

    /**
     * The dispatch's side of a ring: the sender's pieces also end with each 32-token window ({@code windowRows[w]}
     * rows in window w), and the receiver ({@code dispatch_receive}) copies out whatever was announced and grants
     * once {@code batch} copied rows wait (the rest at the end).
     */
    static boolean dispatchStalls(int ring, int chunk, int[] windowRows, int batch) {
        int rows = 0;
        for (int r : windowRows) {
            rows += r;
        }
        long pos = 0;
        long runStart = 0;
        long announced = 0;
        int window = 0;
        int inWindow = 0;
        long consumed = 0;
        long credit = 0;
        while (true) {
            boolean progress = false;
            while (window < windowRows.length) {
                if (inWindow == windowRows[window]) {
                    window++;
                    inWindow = 0;
                    continue;
                }
                long nextRun = pos - runStart >= chunk || pos % ring == 0 ? pos : runStart;
                long room = chunk - (pos - nextRun);
                long piece = Math.min(windowRows[window] - inWindow, Math.min(room, ring - pos % ring));
                if (nextRun == pos) {
                    announced = pos;
                }
                if (pos + piece > credit + ring) {
                    announced = pos;
                    break;
                }
                runStart = nextRun;
                pos += piece;
                inWindow += (int) piece;
                progress = true;
            }
            if (window == windowRows.length) {
                announced = pos;
            }
            if (announced > consumed) {
                consumed = announced;
                if (consumed - credit >= batch || consumed == rows) {
                    credit = consumed;
                }
                progress = true;
            }
            if (window == windowRows.length && consumed == rows) {
                return false;
            }
            if (!progress) {
                return true;
            }
        }
    }

    @Test
    void batchedDispatchGrantsStallNoAllowedConfig() {
        for (int ring = 1; ring <= 48; ring++) {
            for (int chunk = 1; chunk <= ring; chunk++) {
                int batch = grantBatch(ring, chunk, 0);
                for (int lead = 0; lead <= 32; lead += 3) {
                    for (int windows = 1; windows <= 2 + 3 * ring / 32 + 1; windows++) {
                        int[] w = new int[windows];
                        java.util.Arrays.fill(w, 32);
                        w[0] = lead;
                        assertFalse(dispatchStalls(ring, chunk, w, batch),
                                "ring " + ring + ", chunk " + chunk + ", batch " + batch + ", lead " + lead);
                    }
                }
            }
        }
        // A receiver that holds back a whole ring stalls a sender at once.
        assertTrue(dispatchStalls(8, 8, new int[] {32}, 9));
    }
}
