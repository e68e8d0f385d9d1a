package io.gda4j.moe.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The work-queue budget MoeBuffer checks per GPU, with the stream counts of the issue 9 cases: each rank has a work
 * and a control stream; the proxy adds one stream per ordered pair of ranks (its channel), on the sender's GPU.
 */
class WorkQueueBudgetTest {
    private static int proxyStreamsOnOneGpu(int ranks) {
        return 2 * ranks + ranks * (ranks - 1);
    }

    @Test
    void theDriversDefaultIsEightQueuesAndItsMaximumThirtyTwo() {
        assertEquals(8, WorkQueueBudget.connections(null));
        assertEquals(8, WorkQueueBudget.connections(" "));
        assertEquals(32, WorkQueueBudget.connections("32"));
        assertEquals(16, WorkQueueBudget.connections(" 16 "));
        assertEquals(32, WorkQueueBudget.connections("128"));
        assertEquals(8, WorkQueueBudget.connections("0"));
        assertEquals(8, WorkQueueBudget.connections("many"));
    }

    @Test
    void fourProxyRanksOnOneGpuNeedTwentyQueues() {
        assertEquals(20, proxyStreamsOnOneGpu(4));
        String p = WorkQueueBudget.problem(0, 4, proxyStreamsOnOneGpu(4), 8, null);
        assertNotNull(p, "the failing case of issue 9 is refused");
        assertTrue(p.contains("GPU 0 has 20 CUDA streams"), p);
        assertTrue(p.contains("its 4 ranks"), p);
        assertTrue(p.contains("CUDA_DEVICE_MAX_CONNECTIONS is unset, so 8"), p);
        assertTrue(p.contains("set CUDA_DEVICE_MAX_CONNECTIONS=32"), p);
        assertNull(WorkQueueBudget.problem(0, 4, proxyStreamsOnOneGpu(4), WorkQueueBudget.connections("32"), "32"),
                "with 32 queues each stream has its own");
    }

    @Test
    void theCasesThatPassedFitTheDefault() {
        assertNull(WorkQueueBudget.problem(0, 2, proxyStreamsOnOneGpu(2), 8, null), "proxy, 2 ranks: 6 streams");
        assertNull(WorkQueueBudget.problem(0, 4, 2 * 4, 8, null), "p2p, 4 ranks: 8 streams");
    }

    @Test
    void tooManyForEvenThirtyTwoQueuesAsksForFewerRanks() {
        String p = WorkQueueBudget.problem(1, 8, proxyStreamsOnOneGpu(8), 32, "32");
        assertNotNull(p);
        assertTrue(p.contains("GPU 1 has 72 CUDA streams"), p);
        assertTrue(p.contains("is '32', so 32"), p);
        assertTrue(p.contains("put fewer ranks on GPU 1"), p);
        // one rank per GPU over the proxy in a world of 8: its 2 streams + 7 channels
        assertNotNull(WorkQueueBudget.problem(0, 1, 2 + 7, 8, null));
        assertTrue(WorkQueueBudget.problem(0, 1, 9, 8, null).contains("its 1 rank "));
    }

    @Test
    void communicationStreamsCountAndTheMessageSaysHowToDoWithout() {
        // 4 p2p ranks on one GPU: 8 streams fit the default 8 queues, one communication stream each does not
        assertNull(WorkQueueBudget.problem(0, 4, 2 * 4, 0, 8, null));
        String p = WorkQueueBudget.problem(0, 4, 3 * 4, 4, 8, null);
        assertNotNull(p, "the communication streams are counted");
        assertTrue(p.contains("GPU 0 has 12 CUDA streams"), p);
        assertTrue(p.contains("its 4 ranks, the 4 MoE communication streams asked for, and the transports'"), p);
        assertTrue(p.contains("set CUDA_DEVICE_MAX_CONNECTIONS=32"), p);
        assertTrue(p.contains("or leave the MoE communication stream off (MoeConfig.communicationStream(false)"), p);
        assertTrue(p.contains("--comm-stream"), p);
        // 4 proxy ranks: 20 streams are too many without communication streams, so turning them off is no remedy
        String proxy = WorkQueueBudget.problem(0, 4, proxyStreamsOnOneGpu(4) + 4, 4, 8, null);
        assertTrue(proxy.contains("GPU 0 has 24 CUDA streams"), proxy);
        assertTrue(!proxy.contains("leave the MoE communication stream off"), proxy);
        assertNull(WorkQueueBudget.problem(0, 4, proxyStreamsOnOneGpu(4) + 4, 4, 32, "32"));
        assertTrue(WorkQueueBudget.problem(0, 1, 9, 1, 8, null).contains("its 1 rank, the 1 MoE communication stream asked"
                + " for,"));
    }
}
