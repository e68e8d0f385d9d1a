package io.gda4j.moe.ll;

import io.gda4j.moe.MoeConfig;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * How LowLatencyRank launches a tagged dispatch: the receive's grid, for DeepEP's shape (hidden 7168: 14 chunks of
 * 512 channels).
 */
class TaggedDispatchPlanTest {
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
