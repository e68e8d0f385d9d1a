package io.gda4j.moe.ll;

import io.gda4j.moe.MoeConfig;
import io.gda4j.moe.TestProperties;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How LowLatencyRank launches a tagged dispatch: the blocks per token, one kernel or the two halves back to back, and
 * the receive's grid, for DeepEP's shape (hidden 7168: 14 chunks of 512 channels, two blocks per token's row) on an
 * H200 (132 SMs, two dispatch blocks an SM).
 */
class TaggedDispatchPlanTest {
    private static final int ROW_PARTS = 2;

    /** 2 ranks sharing the GPU: a whole call waits, so it takes the rank's share (66 blocks); a send half does not. */
    private static LowLatencyRank.TaggedDispatch shared(int tokens, boolean split) {
        return LowLatencyRank.taggedDispatch(tokens, 2, ROW_PARTS, 132, 66, split, null);
    }

    @Test
    void aCallWithoutTheSplitIsOneKernelWhileOneWaveHoldsEverySendUnit() {
        for (int tokens : new int[] {1, 8, 32}) {
            assertEquals(new LowLatencyRank.TaggedDispatch(2, true), shared(tokens, false), tokens + " tokens");
        }
        assertEquals(66, shared(32, false).units(2, 32), "2 count vectors and 32 x 2 token parts: one wave");
        assertEquals(new LowLatencyRank.TaggedDispatch(1, true), shared(33, false), "2 + 33 x 2 units are past it");
        assertEquals(new LowLatencyRank.TaggedDispatch(1, true), shared(64, false), "2 + 64 units");
        assertEquals(new LowLatencyRank.TaggedDispatch(2, false), shared(65, false),
                "2 + 65 units: past the wave, so the send half on its own grid (130 parts fit its 132 blocks)");
        for (int tokens : new int[] {128, 512}) {
            assertEquals(new LowLatencyRank.TaggedDispatch(1, false), shared(tokens, false), tokens + " tokens");
        }
        assertEquals(new LowLatencyRank.TaggedDispatch(1, true),
                LowLatencyRank.taggedDispatch(512, 2, ROW_PARTS, 132, 66, false, true), "one kernel when asked for");
        assertEquals(new LowLatencyRank.TaggedDispatch(2, false),
                LowLatencyRank.taggedDispatch(1, 2, ROW_PARTS, 132, 66, false, false), "two kernels when asked for");
        // A rank alone on its GPU: the whole call may take every block the GPU holds (264).
        assertEquals(new LowLatencyRank.TaggedDispatch(2, true),
                LowLatencyRank.taggedDispatch(128, 2, ROW_PARTS, 264, 264, false, null), "2 + 256 units fit 264");
        assertEquals(new LowLatencyRank.TaggedDispatch(1, false),
                LowLatencyRank.taggedDispatch(512, 8, ROW_PARTS, 264, 264, false, null));
    }

    @Test
    void thePropertyAsksForEitherForm() {
        String name = LowLatencyRank.ONE_KERNEL_DISPATCH_PROP_NAME;
        assertEquals(null, TestProperties.with(name, null, LowLatencyRank::oneKernelDispatchRequested), "auto");
        assertEquals(Boolean.TRUE, TestProperties.with(name, " True", LowLatencyRank::oneKernelDispatchRequested));
        assertEquals(Boolean.FALSE, TestProperties.with(name, "false", LowLatencyRank::oneKernelDispatchRequested));
        String msg = assertThrows(IllegalArgumentException.class,
                () -> TestProperties.with(name, "2", LowLatencyRank::oneKernelDispatchRequested)).getMessage();
        assertTrue(msg.contains(name) && msg.contains("auto, true or false"), msg);
    }

    @Test
    void aSplitCallIsAlwaysTheSendHalfAlone() {
        assertEquals(new LowLatencyRank.TaggedDispatch(2, false), shared(1, true));
        assertEquals(new LowLatencyRank.TaggedDispatch(2, false), shared(64, true), "128 parts fit the 132 blocks");
        assertEquals(new LowLatencyRank.TaggedDispatch(1, false), shared(128, true));
        assertEquals(130, shared(128, true).units(2, 128));
    }

    /** A warp per item: per row index, a segment of each other source's row and this rank's own row's header. */
    @Test
    void theReceiveHasAWarpPerItem() {
        MoeConfig c = MoeConfig.deepEpLowLatencyBuilder().build();
        int two = c.lowLatencySizing(2, false, LowLatencySizing.Protocol.TAGGED).tagWarpsPerRowIndex();
        int eight = c.lowLatencySizing(8, false, LowLatencySizing.Protocol.TAGGED).tagWarpsPerRowIndex();
        assertEquals(1, LowLatencyRank.receiveBlocks(1, two), "1 token, 2 ranks: 5 warps");
        assertEquals(2, LowLatencyRank.receiveBlocks(2, two), "10 warps");
        assertEquals(80, LowLatencyRank.receiveBlocks(128, two));
        assertEquals(464, LowLatencyRank.receiveBlocks(128, eight), "8 ranks: 29 warps per row index");
        assertEquals(1, LowLatencyRank.receiveBlocks(0, two), "no tokens: one block still writes the counts");
    }
}
