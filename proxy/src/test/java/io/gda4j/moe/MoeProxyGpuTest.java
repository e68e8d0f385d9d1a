package io.gda4j.moe;

import io.gda4j.cuda.Cuda;
import io.gda4j.moe.check.MoeReferenceCheck;
import io.gda4j.moe.check.MoeRouting;
import io.gda4j.moe.core.WorkQueueBudget;
import io.gda4j.moe.ht.MoeRowPath;
import io.gda4j.moe.ht.PeerPaths;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.nic.NicConfig;
import io.gda4j.proxy.ProxyConfig;
import io.gda4j.proxy.ProxyTransport;
import io.gda4j.transport.Transport;
import io.gda4j.world.LocalWorld;
import io.gda4j.world.WorldConfig;
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
 * MoE dispatch and combine over the host proxy against the reference bit for bit; ranks share GPU 0. Both forms a
 * proxy world can get: the default (AUTO: the copy engines, a few host-queued transfers per peer and call, as copies
 * on the call's stream with the copy-engine handler and as one chained post per peer with the verbs handler on the
 * emulated NIC) and the ring protocol forced (rowPath SM: chunks packed in the staging ring, one trigger per run, the
 * tail signalled after it); graph replays of the default form with both handlers. The p2p and ibgda cases are in the
 * host module's MoeGpuTest.
 *
 * <p>4 ranks on one GPU over the proxy make 20 streams (8 of the ranks, 12 channels): more than the 8 hardware work
 * queues of a context unless CUDA_DEVICE_MAX_CONNECTIONS raises them, and then the MoE kernels can deadlock with the
 * proxy's signals (WorkQueueBudget). Without it these cases check that MoeBuffer refuses with what to set; run them
 * with CUDA_DEVICE_MAX_CONNECTIONS=32 to check the transfers.
 */
@Tag("gpu")
@Timeout(300)
class MoeProxyGpuTest {
    @ParameterizedTest(name = "proxy {0} {1} ranks top-{2} rows {3} handler {4}")
    @CsvSource({"BF16, 2, 8, AUTO, copy", "FP8_E4M3, 2, 3, AUTO, copy", "BF16, 4, 1, AUTO, copy",
                "FP8_E4M3, 4, 8, AUTO, copy", "BF16, 2, 8, AUTO, verbs", "FP8_E4M3, 4, 3, AUTO, verbs",
                "BF16, 2, 8, SM, copy", "FP8_E4M3, 4, 8, SM, copy", "BF16, 2, 3, SM, verbs"})
    void proxyMatchesTheReference(ElementType dtype, int ranks, int topK, MoeRowPath rows, String handler) {
        MoeConfig config = config(dtype, topK, rows);
        try (LocalWorld w = world(ranks, handler)) {
            String tooFewQueues = MoeBuffer.queueProblem(w);
            if (tooFewQueues != null) {
                assertTrue(ranks > 2 && WorkQueueBudget.connections() < 2 * ranks + ranks * (ranks - 1), tooFewQueues);
                IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                        () -> MoeBuffer.create(w, config).close());
                assertEquals(tooFewQueues, refused.getMessage());
                assertTrue(refused.getMessage().contains("CUDA_DEVICE_MAX_CONNECTIONS=32"), refused.getMessage());
                return;
            }
            try (MoeBuffer moe = MoeBuffer.create(w, config);
                 MoeReferenceCheck check = new MoeReferenceCheck(moe)) {
                boolean hostTransfers = rows == MoeRowPath.AUTO;
                assertEquals(hostTransfers, moe.sizing().hostTransfers(), moe.highThroughputForm());
                assertEquals(hostTransfers, moe.sizing().direct(), "SM over the proxy is the ring protocol");
                assertTrue(moe.highThroughputForm().startsWith(hostTransfers ? "copy engines, host-queued" : "rings"),
                        moe.highThroughputForm());
                Random rnd = new Random(ranks * 10L + topK);
                long first = 0;
                for (MoeRouting.Kind kind : MoeRouting.HIGH_THROUGHPUT) {
                    long h = check.run(kind, 99, MoeRouting.tokenCounts(ranks, 64, new Random(5)));
                    if (kind == MoeRouting.Kind.UNIFORM) {
                        first = h;
                    }
                }
                assertEquals(first, check.run(MoeRouting.Kind.UNIFORM, 99,
                        MoeRouting.tokenCounts(ranks, 64, new Random(5))), "the same call again gives the same bits");
                check.run(MoeRouting.Kind.SKEWED, rnd.nextLong(), MoeRouting.tokenCounts(ranks, 64, rnd));
                // The timing over the proxy: the samples' MoeTimingRigGpuTest (the timing rig lives there).
            }
        }
    }

    /**
     * The host-queued form captured into a CUDA graph and replayed with new data, bit for bit each time: the copies
     * are memcpy nodes, the verbs handler's posts a host node that hands the same batch over on every replay (and the
     * dispatch of a captured pair writes one region, so each replay waits for every rank's entry).
     */
    @ParameterizedTest(name = "proxy graph replays, handler {0}")
    @CsvSource({"copy", "verbs"})
    void capturedCallsReplayBitForBit(String handler) {
        MoeConfig config = config(ElementType.BF16, 8, MoeRowPath.AUTO);
        try (LocalWorld w = world(2, handler);
             MoeBuffer moe = MoeBuffer.create(w, config);
             MoeReferenceCheck check = new MoeReferenceCheck(moe)) {
            assertTrue(moe.sizing().hostTransfers());
            MoeGraphReplay.runCaptured(check, MoeRouting.Kind.SKEWED, 11, new int[] {64, 23}, 5);
            MoeGraphReplay.runCapturedDispatches(check, MoeRouting.Kind.UNIFORM, 22, new int[] {50, 64}, 4);
            check.run(MoeRouting.Kind.UNIFORM, 3, new int[] {64, 64}); // eager calls after the replays
        }
    }

    /** The same config with the rows forced onto the copy engines takes the host transfers, as AUTO does. */
    @ParameterizedTest(name = "proxy rowPath COPY_ENGINE, handler {0}")
    @CsvSource({"copy", "verbs"})
    void copyEngineForcedIsTheHostTransfers(String handler) {
        try (LocalWorld w = world(2, handler);
             MoeBuffer moe = MoeBuffer.create(w, config(ElementType.FP8_E4M3, 8, MoeRowPath.COPY_ENGINE));
             MoeReferenceCheck check = new MoeReferenceCheck(moe, true)) {
            assertTrue(moe.sizing().hostTransfers());
            assertFalse(moe.highThroughputForm().startsWith("rings"), moe.highThroughputForm());
            // Expert outputs written into each rank's combineInput(): over the NIC no copy into the heap first.
            check.run(MoeRouting.Kind.UNIFORM, 5, new int[] {64, 31});
            check.run(MoeRouting.Kind.SKEWED, 6, new int[] {0, 64});
        }
    }

    /** AUTO keeps the rings where the heap has no room for the host-transfer layout, and says so. */
    @Test
    void aHeapTooSmallForTheHostTransfersKeepsTheRings() {
        MoeConfig config = config(ElementType.BF16, 8, MoeRowPath.AUTO);
        long rings = config.sizing(2, PeerPaths.RINGS).heapBytes();
        long host = config.sizing(2, PeerPaths.HOST_TRANSFERS).heapBytes();
        assertTrue(rings + (1 << 20) < host, rings + " / " + host);
        try (LocalWorld w = world(2, "copy", rings + (1 << 20));
             MoeBuffer moe = MoeBuffer.create(w, config);
             MoeReferenceCheck check = new MoeReferenceCheck(moe)) {
            assertFalse(moe.sizing().direct(), moe.highThroughputForm());
            assertTrue(moe.highThroughputForm().contains("raise WorldConfig heapSizeBytes"), moe.highThroughputForm());
            check.run(MoeRouting.Kind.UNIFORM, 8, new int[] {64, 40});
        }
    }

    private static MoeConfig config(ElementType dtype, int topK, MoeRowPath rows) {
        return MoeConfig.builder().hidden(4096).dtype(dtype).maxTokensPerRank(64).numExperts(32).topK(topK)
                .numChannels(3).chunkTokens(4).ringTokens(16).combineWarps(4).rowPath(rows).build();
    }

    /** Ranks sharing GPU 0 over the proxy with {@code handler}: copy (the copy engine) or verbs (the emulated NIC). */
    private static LocalWorld world(int ranks, String handler) {
        return world(ranks, handler, 128L << 20);
    }

    private static LocalWorld world(int ranks, String handler, long heapBytes) {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
        assumeTrue(Cuda.deviceCount() > 0, "no CUDA device visible");
        WorldConfig.Builder b = WorldConfig.builder().gpus(Collections.nCopies(ranks, 0)).heapSizeBytes(heapBytes)
                .waitTimeout(Duration.ofSeconds(30)).transport(Transport.PROXY.label());
        if (handler.equals("verbs")) {
            b.setting(ProxyConfig.HANDLER, "verbs").setting(NicConfig.NIC, "emulated");
        }
        LocalWorld w = LocalWorld.create(b.build());
        assertEquals(Transport.PROXY, w.transport(0, 1));
        String label = ProxyTransport.handlerOf(w.localRanks().get(0), 1).orElse("?");
        assertTrue(label.startsWith(handler.equals("verbs") ? "verbs on the emulated NIC" : "copy engine"), label);
        return w;
    }
}
