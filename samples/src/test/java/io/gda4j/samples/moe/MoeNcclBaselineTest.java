package io.gda4j.samples.moe;

import io.gda4j.moe.MoeConfig;
import io.gda4j.moe.check.MoeReference;
import io.gda4j.moe.check.MoeRouting;
import io.gda4j.moe.ht.HighThroughputSizing;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.samples.nccl.AllToAllV;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The NCCL baseline's exchange of a routing agrees with what the Java reference dispatches and combines. */
class MoeNcclBaselineTest {
    static List<MoeRouting.Kind> highThroughputKinds() {
        return MoeRouting.HIGH_THROUGHPUT;
    }

    @ParameterizedTest
    @MethodSource("highThroughputKinds")
    void dispatchCountsAndOffsetsAreTheReferencesReceivedOrder(MoeRouting.Kind kind) {
        for (ElementType dtype : new ElementType[] {ElementType.BF16, ElementType.FP8_E4M3}) {
            int n = 4;
            MoeConfig c = MoeConfig.builder().hidden(256).dtype(dtype).maxTokensPerRank(40).numExperts(16).topK(3)
                    .numChannels(3).chunkTokens(4).ringTokens(8).combineWarps(2).build();
            HighThroughputSizing s = c.sizing(n);
            Random rnd = new Random(kind.ordinal() * 7L + dtype.ordinal());
            int[] tokens = MoeRouting.tokenCounts(n, 40, rnd);
            int[][] topk = new int[n][];
            MoeReference.Input[] in = new MoeReference.Input[n];
            for (int r = 0; r < n; r++) {
                topk[r] = MoeRouting.topk(kind, tokens[r], c.topK(), c.numExperts(), n, rnd);
                in[r] = MoeRouting.input(s, r, tokens[r], topk[r], rnd);
            }
            AllToAllV dispatch = MoeNcclBaseline.dispatchPlan(s, topk, tokens);
            AllToAllV combine = MoeNcclBaseline.combinePlan(s, topk, tokens);
            long row = s.payloadBytes() + 4L * s.scalesPerRow();
            long back = 2L * c.hidden();
            for (int r = 0; r < n; r++) {
                MoeReference.Received got = MoeReference.dispatch(s, in, r);
                MoeReference.Layout layout = MoeReference.layout(topk[r], tokens[r], c.topK(), c.numExperts(), n,
                        c.numChannels());
                assertEquals(got.count() * row, dispatch.recvTotal(r), "rank " + r + " receives the reference's rows");
                long sent = 0;
                for (int p = 0; p < n; p++) {
                    int from = 0;
                    int first = -1;
                    for (int i = 0; i < got.count(); i++) {
                        if (got.srcRank()[i] == p) {
                            from++;
                            first = first < 0 ? i : first;
                        }
                    }
                    assertEquals(from * row, dispatch.recvBytes()[r][p], kind + " rank " + r + " from " + p);
                    if (from > 0) {
                        assertEquals(first * row, dispatch.recvOffsets()[r][p], "rows of " + p + " start where the"
                                + " reference puts them (by source rank, then token)");
                    }
                    assertEquals(layout.tokensPerRank()[p] * row, dispatch.sendBytes()[r][p], "rank " + r + " to " + p);
                    assertEquals(sent, dispatch.sendOffsets()[r][p]);
                    sent += dispatch.sendBytes()[r][p];
                    assertEquals(dispatch.recvBytes()[p][r], dispatch.sendBytes()[r][p]);
                    assertEquals(dispatch.recvBytes()[r][p] / row * back, combine.sendBytes()[r][p],
                            "combine returns every received row, as BF16");
                    assertEquals(dispatch.sendBytes()[r][p] / row * back, combine.recvBytes()[r][p]);
                }
            }
        }
    }

    @Test
    void exchangesAreSquareAndNonNegative() {
        assertThrows(IllegalArgumentException.class, () -> AllToAllV.ofRows(new long[][] {{1, 2}, {3}}, 4));
        assertThrows(IllegalArgumentException.class, () -> AllToAllV.ofRows(new long[][] {{1, -2}, {3, 4}}, 4));
        AllToAllV a = AllToAllV.ofRows(new long[][] {{1, 2}, {3, 4}}, 10);
        assertEquals(30, a.sendTotal(0));
        assertEquals(40, a.recvTotal(0));
        assertEquals(10, a.recvOffsets()[0][1]);
        assertEquals(30, a.sendOffsets()[1][1]);
    }

    @Test
    void processesAgreeOnTheFirstReasonNcclCannotRun() {
        byte[] none = new byte[0];
        assertNull(MoeNcclBaseline.agreedReason(new byte[][] {none, none}));
        byte[] missing = "NCCL not found (tried libnccl.so.2: cannot open)".getBytes(StandardCharsets.UTF_8);
        assertEquals("NCCL not found (tried libnccl.so.2: cannot open) (said by process 1 of 3)",
                MoeNcclBaseline.agreedReason(new byte[][] {none, missing, missing}));
        assertEquals("NCCL not found (tried libnccl.so.2: cannot open)",
                MoeNcclBaseline.agreedReason(new byte[][] {missing}), "one process names no process");
    }
}
