package io.gda4j.moe;

import io.gda4j.cuda.Cuda;
import io.gda4j.moe.check.MoeLowLatencyReferenceCheck;
import io.gda4j.moe.check.MoeRouting;
import io.gda4j.moe.tensor.DeviceTensor;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.nic.NicConfig;
import io.gda4j.proxy.ProxyActivity;
import io.gda4j.proxy.ProxyConfig;
import io.gda4j.proxy.ProxyTransport;
import io.gda4j.transport.Transport;
import io.gda4j.world.LocalWorld;
import io.gda4j.world.WorldConfig;
import jcuda.driver.CUgraph;
import jcuda.driver.CUgraphExec;
import jcuda.driver.CUstreamCaptureMode;
import jcuda.driver.JCudaDriver;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.Collections;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Low-latency dispatch and combine over the host proxy, a batched pair (rows cast into messages in the send order;
 * per pair of ranks one PUT_SIGNAL of the count table and all the rows behind it, with the pair's batch word; the
 * combine stages every expert's rows in the source's send order and returns them in one put), against the reference
 * bit for bit, and exactly those two triggers per ordered pair and call; ranks share GPU 0. The routings include pairs with no rows at all (everything to rank 0, one expert).
 * Hidden 7168 gives a token two blocks of the dispatch send (its parts; up to 32 tokens fit in one wave), whose
 * stores the pair's one put must all follow. A proxy pair runs the counted protocol, whatever is asked (the tagged
 * one is the default only where every pair is direct). p2p and ibgda: MoeLowLatencyGpuTest in the host module. As in
 * MoeProxyGpuTest, 4 ranks need
 * CUDA_DEVICE_MAX_CONNECTIONS=32; without it the case checks that the buffer is refused with what to set.
 */
@Tag("gpu")
@Timeout(300)
class MoeLowLatencyProxyGpuTest {
    @ParameterizedTest(name = "proxy {0} {1} ranks top-{2} split {3} hidden {4}")
    @CsvSource({"BF16, 2, 8, false, 2048", "FP8_E4M3, 2, 3, true, 2048", "FP8_E4M3, 4, 8, false, 2048",
                "BF16, 2, 8, true, 7168", "FP8_E4M3, 2, 8, false, 7168"})
    void proxyMatchesTheReference(ElementType type, int ranks, int topK, boolean split, int hidden) {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
        assumeTrue(Cuda.deviceCount() > 0, "no CUDA device visible");
        MoeConfig config = MoeConfig.lowLatencyBuilder().hidden(hidden).numExperts(32).topK(topK).lowLatency(32, type)
                .build();
        try (LocalWorld w = proxyWorld(ranks, config)) {
            assertEquals(Transport.PROXY, w.transport(0, 1));
            String tooFewQueues = MoeBuffer.queueProblem(w);
            if (tooFewQueues != null) {
                IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                        () -> MoeBuffer.create(w, config).close());
                assertEquals(tooFewQueues, refused.getMessage());
                assertTrue(refused.getMessage().contains("CUDA_DEVICE_MAX_CONNECTIONS"), refused.getMessage());
                return;
            }
            try (MoeBuffer ll = MoeBuffer.create(w, config);
                 // Where the expert outputs are written: hidden 7168 passes each call's combine input as y (the
                 // batched combine then stages its rows from there, as from a tensor of the user's own).
                 MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll, hidden == 7168)) {
                assertFalse(ll.lowLatency().sizing().tagged(), "a proxy pair runs the counted protocol, by default too");
                Random rnd = new Random(ranks * 10L + topK);
                for (MoeRouting.Kind kind : MoeRouting.Kind.values()) {
                    long[][] before = triggers(w);
                    check.run(kind, rnd.nextLong(), MoeRouting.tokenCounts(ranks, 32, rnd), split);
                    expectTriggersSince(w, before, 2, kind + " routing");
                }
            }
        }
    }
    /**
     * More tokens than one wave of blocks (300 of hidden 128 on ranks sharing GPU 0) take the route kernel before the
     * dispatch, fewer route in the dispatch's blocks: the batched pair's count table is filled from either (the send
     * rows the route kernel left, or those each block found), on both buffers, split and whole.
     */
    @Test
    void batchedPairsOfCallsRoutedByTheRouteKernelAndByTheDispatch() {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
        assumeTrue(Cuda.deviceCount() > 0, "no CUDA device visible");
        MoeConfig config = MoeConfig.lowLatencyBuilder().hidden(128).numExperts(64).topK(8)
                .lowLatency(300, ElementType.FP8_E4M3).build();
        try (LocalWorld w = proxyWorld(2, config);
             MoeBuffer ll = MoeBuffer.create(w, config);
             MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll)) {
            int[] tokens = {5, 300, 7, 300, 1, 300};
            MoeRouting.Kind[] kinds = MoeRouting.Kind.values();
            for (int i = 0; i < tokens.length; i++) {
                long[][] before = triggers(w);
                check.run(kinds[i % kinds.length], 60 + i, new int[] {tokens[i], Math.max(1, tokens[i] - 2)}, i % 3 == 2);
                expectTriggersSince(w, before, 2, tokens[i] + " tokens");
            }
        }
    }

    /**
     * Dispatch + combine of each rank captured in one CUDA graph, replayed 30 times with new inputs: over the proxy
     * too no call waits for the host, the sequence numbers live on the GPU, and the kernels push their triggers from
     * the graph (two per pair and replay, as from the calls).
     */
    @Test
    void aCapturedGraphReplaysOverTheProxy() {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
        assumeTrue(Cuda.deviceCount() > 0, "no CUDA device visible");
        MoeConfig config = MoeConfig.lowLatencyBuilder().hidden(2048).numExperts(32).topK(8)
                .lowLatency(32, ElementType.FP8_E4M3).build();
        try (LocalWorld w = proxyWorld(2, config);
             MoeBuffer ll = MoeBuffer.create(w, config);
             MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll)) {
            int[] tokens = {32, 9};
            CUgraphExec[] exec = new CUgraphExec[2];
            DeviceTensor[] out = new DeviceTensor[2];
            int[] buffers = new int[2];
            try {
                for (int r = 0; r < 2; r++) {
                    MoeRank m = ll.rank(r);
                    m.rank().context().makeCurrent();
                    JCudaDriver.cuStreamBeginCapture(m.stream().handle(),
                            CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
                    MoeLowLatencyDispatch d = m.lowLatencyDispatch(check.x(r, tokens[r]), check.topkIdx(r, tokens[r]),
                            false);
                    buffers[r] = d.buffer();
                    out[r] = m.lowLatencyCombine(check.y(r, d), check.topkIdx(r, tokens[r]),
                            check.topkWeights(r, tokens[r]), d, false).output();
                    CUgraph graph = new CUgraph();
                    JCudaDriver.cuStreamEndCapture(m.stream().handle(), graph);
                    exec[r] = new CUgraphExec();
                    JCudaDriver.cuGraphInstantiate(exec[r], graph, 0);
                    JCudaDriver.cuGraphDestroy(graph);
                }
                for (int i = 0; i < 30; i++) {
                    MoeLowLatencyReferenceCheck.Case c = check.prepare(MoeRouting.Kind.values()[i % 7], i, tokens);
                    long[][] before = triggers(w);
                    for (int r = 0; r < 2; r++) {
                        JCudaDriver.cuGraphLaunch(exec[r], ll.rank(r).stream().handle());
                    }
                    long h = check.expectDispatch(c, buffers);
                    check.expectCombine(c, out, h);
                    expectTriggersSince(w, before, 2, "replay " + i);
                }
            } finally {
                for (CUgraphExec e : exec) {
                    if (e != null) {
                        JCudaDriver.cuGraphExecDestroy(e);
                    }
                }
            }
        }
    }

    /**
     * The verbs handler on the emulated NIC (its engine runs the WRITEs as CUDA copies): the same calls, each trigger
     * a chain of WRITEs and the signal's WRITE behind them on one QP, bit for bit and two triggers per pair and call.
     */
    @Test
    void verbsHandlerOnTheEmulatedNic() {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
        assumeTrue(Cuda.deviceCount() > 0, "no CUDA device visible");
        MoeConfig config = MoeConfig.lowLatencyBuilder().hidden(2048).numExperts(32).topK(8)
                .lowLatency(32, ElementType.FP8_E4M3).build();
        System.setProperty(ProxyConfig.HANDLER_PROP_NAME, "verbs");
        System.setProperty(NicConfig.NIC_PROP_NAME, "emulated");
        LocalWorld world;
        try {
            world = proxyWorld(2, config);
        } finally {
            System.clearProperty(ProxyConfig.HANDLER_PROP_NAME);
            System.clearProperty(NicConfig.NIC_PROP_NAME);
        }
        try (LocalWorld w = world;
             MoeBuffer ll = MoeBuffer.create(w, config);
             MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll)) {
            String handler = ProxyTransport.handlerOf(w.rank(0), 1).orElseThrow();
            assertTrue(handler.startsWith("verbs"), handler);
            Random rnd = new Random(7);
            int i = 0;
            for (MoeRouting.Kind kind : MoeRouting.Kind.values()) {
                long[][] before = triggers(w);
                check.run(kind, rnd.nextLong(), MoeRouting.tokenCounts(2, 32, rnd), i++ % 2 == 1);
                expectTriggersSince(w, before, 2, kind + " routing over verbs");
            }
        }
    }

    /** Ranks sharing GPU 0 over the proxy, with a heap for {@code config}'s low-latency part. */
    static LocalWorld proxyWorld(int ranks, MoeConfig config) {
        return LocalWorld.create(WorldConfig.builder().gpus(Collections.nCopies(ranks, 0))
                .heapSizeBytes(config.lowLatencySizing(ranks).heapBytes() + (64L << 20))
                .waitTimeout(Duration.ofSeconds(30)).transport(Transport.PROXY.label()).build());
    }

    /** Triggers each rank's channel to each peer has handled so far ([rank][peer]; 0 for itself). */
    static long[][] triggers(LocalWorld w) {
        long[][] t = new long[w.size()][w.size()];
        for (int r = 0; r < w.size(); r++) {
            for (int p = 0; p < w.size(); p++) {
                t[r][p] = ProxyActivity.of(w.rank(r), p).map(ProxyActivity::triggers).orElse(0L);
            }
        }
        return t;
    }

    /**
     * Every rank's channel to every other rank handled exactly {@code perPair} triggers since {@code before}: one
     * call's dispatch and combine (one each, however many rows or experts). The proxy thread counts a batch once its
     * driver calls returned, which may be just after the GPU saw their signals: a short bounded wait for the count.
     */
    static void expectTriggersSince(LocalWorld w, long[][] before, long perPair, String what) {
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        long[][] now = triggers(w);
        while (!reached(now, before, perPair) && System.nanoTime() < deadline) {
            Thread.onSpinWait();
            now = triggers(w);
        }
        for (int r = 0; r < w.size(); r++) {
            for (int p = 0; p < w.size(); p++) {
                if (p != r) {
                    assertEquals(perPair, now[r][p] - before[r][p], "triggers of rank " + r + " to rank " + p
                            + " for one dispatch and combine (" + what + ")");
                }
            }
        }
    }

    private static boolean reached(long[][] now, long[][] before, long perPair) {
        for (int r = 0; r < now.length; r++) {
            for (int p = 0; p < now.length; p++) {
                if (p != r && now[r][p] - before[r][p] < perPair) {
                    return false;
                }
            }
        }
        return true;
    }
}
