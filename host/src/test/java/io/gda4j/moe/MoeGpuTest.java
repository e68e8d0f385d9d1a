package io.gda4j.moe;

import io.gda4j.moe.ht.MoeRowPath;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.moe.check.MoeReferenceCheck;
import io.gda4j.moe.check.MoeRouting;
import io.gda4j.moe.tensor.DeviceTensor;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.nic.NicConfig;
import io.gda4j.transport.Transport;
import io.gda4j.world.GpuWorlds;
import io.gda4j.world.LocalWorld;
import io.gda4j.world.WorldConfig;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Layout, dispatch and combine on the GPU against {@link MoeReference}, bit for bit ({@link MoeReferenceCheck}): every
 * routing case, top-k 1..8, hidden 2048/4096/7168, BF16 and FP8, 2 and 4 ranks sharing GPU 0, over p2p (rows moved by
 * the SMs, and by the copy engines in a third of the cases) and over ibgda through the emulated NIC (the proxy
 * transport: MoeProxyGpuTest in the proxy module). Rings are kept small (16 rows, chunks of 4) so the credits wrap many
 * times per call.
 */
@Tag("gpu")
@Timeout(300)
class MoeGpuTest {
    static LocalWorld world(int ranks, String transport, Duration timeout) {
        return world(ranks, transport, timeout, 256L << 20);
    }

    static LocalWorld world(int ranks, String transport, Duration timeout, long heapBytes) {
        GpuWorlds.assumeGpu();
        WorldConfig wc = WorldConfig.builder().gpus(GpuWorlds.gpus(ranks, true)).heapSizeBytes(heapBytes)
                .waitTimeout(timeout).transport(transport).build();
        if (!transport.equals(Transport.IBGDA.label())) {
            return LocalWorld.create(wc);
        }
        System.setProperty(NicConfig.NIC_PROP_NAME, "emulated");
        try {
            return LocalWorld.create(wc);
        } finally {
            System.clearProperty(NicConfig.NIC_PROP_NAME);
        }
    }

    static MoeConfig config(int hidden, ElementType dtype, int topK, int maxTokens) {
        return config(hidden, dtype, topK, maxTokens, MoeRowPath.AUTO);
    }

    static MoeConfig config(int hidden, ElementType dtype, int topK, int maxTokens, MoeRowPath rows) {
        return MoeConfig.builder().hidden(hidden).dtype(dtype).maxTokensPerRank(maxTokens).numExperts(32).topK(topK)
                .numChannels(3).chunkTokens(4).ringTokens(16).combineWarps(4).rowPath(rows).build();
    }

    static Stream<Arguments> p2pCases() {
        Stream.Builder<Arguments> b = Stream.builder();
        int i = 0;
        for (MoeRouting.Kind kind : MoeRouting.HIGH_THROUGHPUT) {
            for (int topK = 1; topK <= 8; topK++) {
                int hidden = new int[] {2048, 4096, 7168}[i % 3];
                ElementType dtype = i % 2 == 0 ? ElementType.BF16 : ElementType.FP8_E4M3;
                b.add(Arguments.of(kind, topK, hidden, dtype, 2 + 2 * (i % 2),
                        i % 3 == 0 ? MoeRowPath.COPY_ENGINE : MoeRowPath.SM));
                i++;
            }
        }
        return b.build();
    }

    @ParameterizedTest(name = "p2p {0} top-{1} hidden {2} {3} {4} ranks, rows by {5}")
    @MethodSource("p2pCases")
    void p2pMatchesTheReference(MoeRouting.Kind kind, int topK, int hidden, ElementType dtype, int ranks,
                                MoeRowPath rows) {
        try (LocalWorld w = world(ranks, "p2p", Duration.ofSeconds(20));
             MoeBuffer moe = MoeBuffer.create(w, config(hidden, dtype, topK, 96, rows));
             MoeReferenceCheck check = new MoeReferenceCheck(moe, kind.ordinal() % 2 == 0)) {
            assertEquals(rows == MoeRowPath.COPY_ENGINE, moe.sizing().copyEngine());
            Random rnd = new Random(kind.ordinal() * 31L + topK);
            check.run(kind, rnd.nextLong(), MoeRouting.tokenCounts(ranks, 96, rnd));
            // a second and third call on the same buffer: the layout exchange, the received regions and the
            // sequence words alternate and carry over
            check.run(kind, rnd.nextLong(), MoeRouting.tokenCounts(ranks, 96, rnd));
            check.run(kind, rnd.nextLong(), MoeRouting.tokenCounts(ranks, 96, rnd));
        }
    }

    /**
     * Dispatches with one handle and no combine between them, each checked against the reference, then the first
     * result's getters refused and a combine of the last (the received tensors alternate between two regions, so a
     * dispatch never waits for the one before it); then the same dispatch captured alone in a graph and replayed,
     * which writes one region every time and so waits at its entry for every rank's.
     */
    @ParameterizedTest(name = "rows by {0}")
    @EnumSource(value = MoeRowPath.class, names = {"SM", "COPY_ENGINE"})
    void dispatchesWithACachedHandleAndNoCombineBetweenThemMatchTheReference(MoeRowPath rows) {
        try (LocalWorld w = world(2, "p2p", Duration.ofSeconds(20));
             MoeBuffer moe = MoeBuffer.create(w, config(2048, ElementType.FP8_E4M3, 4, 64, rows));
             MoeReferenceCheck check = new MoeReferenceCheck(moe)) {
            check.runRepeatedDispatches(MoeRouting.Kind.WITH_NONE, 21, new int[] {64, 37}, 5);
            MoeGraphReplay.runCapturedDispatches(check, MoeRouting.Kind.UNIFORM, 22, new int[] {50, 64}, 6);
            check.run(MoeRouting.Kind.SKEWED, 23, new int[] {64, 64});
        }
    }

    @ParameterizedTest(name = "ibgda (emulated NIC) {0} {1} ranks")
    @MethodSource("transportCases")
    void ibgdaMatchesTheReference(ElementType dtype, int ranks) {
        try (LocalWorld w = world(ranks, Transport.IBGDA.label(), Duration.ofSeconds(30))) {
            // The emulated NIC drives each QP with a stream of its own: with 4 ranks on one GPU that is more streams
            // than the default 8 work queues, which MoeBuffer refuses (see WorkQueueBudget and MoeProxyGpuTest).
            String tooFewQueues = MoeBuffer.queueProblem(w);
            if (tooFewQueues != null) {
                IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                        () -> MoeBuffer.create(w, config(2048, dtype, 4, 64)).close());
                assertEquals(tooFewQueues, refused.getMessage());
                return;
            }
            try (MoeBuffer moe = MoeBuffer.create(w, config(2048, dtype, 4, 64));
                 MoeReferenceCheck check = new MoeReferenceCheck(moe)) {
                Random rnd = new Random(ranks);
                for (MoeRouting.Kind kind : new MoeRouting.Kind[] {MoeRouting.Kind.UNIFORM, MoeRouting.Kind.SKEWED}) {
                    check.run(kind, rnd.nextLong(), MoeRouting.tokenCounts(ranks, 64, rnd));
                }
            }
        }
    }

    static Stream<Arguments> transportCases() {
        return Stream.of(Arguments.of(ElementType.BF16, 2), Arguments.of(ElementType.FP8_E4M3, 2),
                Arguments.of(ElementType.BF16, 4));
    }

    /**
     * World sizes whose groups of warps per peer are odd: 3 ranks get groups of 5 warps, 9 ranks one warp each (no
     * named barrier). A ring of 10 rows in chunks of 4 cuts pieces at the ring's end as well as at chunk ends.
     */
    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {3, 9})
    void oddWorldSizesMatchTheReference(int ranks) {
        try (LocalWorld w = world(ranks, "p2p", Duration.ofSeconds(30))) {
            String queues = MoeBuffer.queueProblem(w);
            assumeTrue(queues == null, () -> queues + " (set CUDA_DEVICE_MAX_CONNECTIONS=32 for this test)");
            MoeConfig c = MoeConfig.builder().hidden(2048).dtype(ranks == 3 ? ElementType.FP8_E4M3 : ElementType.BF16)
                    .maxTokensPerRank(80).numExperts(36).topK(8).numChannels(3).chunkTokens(4).ringTokens(10)
                    .combineWarps(4).build();
            try (MoeBuffer moe = MoeBuffer.create(w, c); MoeReferenceCheck check = new MoeReferenceCheck(moe)) {
                Random rnd = new Random(ranks);
                for (MoeRouting.Kind kind : new MoeRouting.Kind[] {MoeRouting.Kind.UNIFORM, MoeRouting.Kind.SKEWED}) {
                    check.run(kind, rnd.nextLong(), MoeRouting.tokenCounts(ranks, 80, rnd));
                }
            }
        }
    }

    /** The DeepEP shape at a size one GPU holds: 4096 tokens of hidden 7168, top-8 of 256, with deep rings. */
    @ParameterizedTest(name = "rows by {0}")
    @EnumSource(value = MoeRowPath.class, names = {"SM", "COPY_ENGINE"})
    void deepEpShapeAtFullTokens(MoeRowPath rows) {
        MoeConfig c = MoeConfig.deepEpBuilder().numChannels(8).ringTokens(64).chunkTokens(16).rowPath(rows).build();
        try (LocalWorld w = world(2, "p2p", Duration.ofSeconds(30), c.sizing(2, true).heapBytes() + (16L << 20));
             MoeBuffer moe = MoeBuffer.create(w, c);
             MoeReferenceCheck check = new MoeReferenceCheck(moe, rows == MoeRowPath.SM)) {
            check.run(MoeRouting.Kind.UNIFORM, 7, new int[] {4096, 4096});
        }
    }

    @Test
    @Timeout(600)
    void aHundredRepetitionsGiveTheSameHash() {
        try (LocalWorld w = world(4, "p2p", Duration.ofSeconds(20));
             MoeBuffer moe = MoeBuffer.create(w, config(2048, ElementType.BF16, 8, 64));
             MoeReferenceCheck check = new MoeReferenceCheck(moe)) {
            int[] tokens = {64, 17, 0, 64};
            long first = check.run(MoeRouting.Kind.SKEWED, 42, tokens);
            for (int i = 1; i < 100; i++) {
                assertEquals(first, check.run(MoeRouting.Kind.SKEWED, 42, tokens), "repetition " + i);
            }
        }
    }

    /**
     * Dispatch + combine captured in one CUDA graph per rank and replayed 100 times with new tokens, weights and
     * expert outputs: the dispatch sequence number is raised on the GPU, so each replay is a new call to the peers
     * (a number passed from the host would be replayed stale and the peers would take old counts for new ones).
     */
    @ParameterizedTest(name = "rows by {0}")
    @EnumSource(value = MoeRowPath.class, names = {"SM", "COPY_ENGINE"})
    @Timeout(600)
    void aCapturedDispatchAndCombineReplay100TimesWithNewData(MoeRowPath rows) {
        try (LocalWorld w = world(2, "p2p", Duration.ofSeconds(20));
             MoeBuffer moe = MoeBuffer.create(w, config(2048, ElementType.FP8_E4M3, 8, 64, rows));
             MoeReferenceCheck check = new MoeReferenceCheck(moe)) {
            MoeGraphReplay.runCaptured(check, MoeRouting.Kind.SKEWED, 11, new int[] {64, 23},
                    rows == MoeRowPath.SM ? 100 : 30);
            // the eager path still works after the graphs (the sequence word carried on)
            check.run(MoeRouting.Kind.UNIFORM, 12, new int[] {40, 64});
        }
    }

    /**
     * Refused layouts and dispatches launch nothing. A valid layout is a call of every rank in a direct world (its
     * exchange waits for every rank's), so the valid ones are made on both ranks, and their exchanges finish before
     * the refused dispatches are tried.
     */
    @Test
    void badInputIsRefusedBeforeAnyDispatchKernel() {
        try (LocalWorld w = world(2, "p2p", Duration.ofSeconds(10));
             MoeBuffer moe = MoeBuffer.create(w, config(2048, ElementType.BF16, 2, 8));
             DeviceMemory topk = w.rank(0).context().allocate(8 * 2 * 16);
             DeviceMemory topk1 = w.rank(1).context().allocate(8 * 2 * 16);
             DeviceMemory x = w.rank(0).context().allocate(2 * 2048 * 16)) {
            topk1.fill((byte) 0);   // rank 1: every token to expert 0, twice
            MoeRank r1 = moe.rank(1);
            DeviceTensor t1 = DeviceTensor.of(topk1, ElementType.INT64, 3, 2);
            long[] idx = {0, 1, 2, 32, 5, -1};   // token 1 slot 1 names expert 32 of 32
            java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(8 * idx.length).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            for (long v : idx) {
                b.putLong(v);
            }
            topk.copyFromHost(0, b.array(), 0, b.capacity());
            MoeRank r0 = moe.rank(0);
            IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                    () -> r0.layout(DeviceTensor.of(topk, ElementType.INT64, 3, 2)));
            assertTrue(bad.getMessage().contains("topkIdx[1][1] = 32"), bad.getMessage());
            IllegalArgumentException many = assertThrows(IllegalArgumentException.class,
                    () -> r0.layout(DeviceTensor.of(topk, ElementType.INT64, 9, 2)));
            assertTrue(many.getMessage().contains("maxTokensPerRank"), many.getMessage());
            assertThrows(IllegalArgumentException.class, () -> r0.layout(DeviceTensor.of(topk, ElementType.INT32, 3, 2)));
            idx[3] = 3;
            b.clear();
            for (long v : idx) {
                b.putLong(v);
            }
            topk.copyFromHost(0, b.array(), 0, b.capacity());
            MoeHandle h = r0.layout(DeviceTensor.of(topk, ElementType.INT64, 3, 2));
            r1.layout(t1);
            w.rank(0).stream().synchronize();
            w.rank(1).stream().synchronize();
            DeviceTensor t = DeviceTensor.of(topk, ElementType.INT64, 3, 2);
            DeviceTensor wts = DeviceTensor.of(x, ElementType.FP32, 3, 2);
            assertThrows(IllegalArgumentException.class,
                    () -> r0.dispatch(DeviceTensor.of(x, ElementType.FP8_E4M3, 3, 2048), null, t, wts, h), "wrong dtype");
            assertThrows(IllegalArgumentException.class,
                    () -> r0.dispatch(DeviceTensor.of(x, ElementType.BF16, 2, 2048), null, t, wts, h), "wrong token count");
            assertThrows(IllegalArgumentException.class,
                    () -> DeviceTensor.of(x, ElementType.BF16, 3, 16384), "a buffer too small");
            r0.layout(t);
            r1.layout(t1);
            w.rank(0).stream().synchronize();
            w.rank(1).stream().synchronize();
            assertThrows(IllegalStateException.class,
                    () -> r0.dispatch(DeviceTensor.of(x, ElementType.BF16, 3, 2048), null, t, wts, h), "a stale handle");
            assertTrue(!w.rank(0).device().kernelsMayBeRunning(), "the refused dispatches launched nothing");
            moe.checkErrors();
        }
    }

    /**
     * Rank 1 never lays out nor dispatches: rank 0's layout exchange gives up after the world's timeout, naming rank 1,
     * its dispatch does not wait for ever, and nothing hangs.
     */
    @Test
    void aRankThatNeverJoinsMakesTheOthersTimeOutNamingIt() {
        try (LocalWorld w = world(2, "p2p", Duration.ofSeconds(2));
             MoeBuffer moe = MoeBuffer.create(w, config(2048, ElementType.BF16, 2, 16));
             DeviceMemory topk = w.rank(0).context().allocate(8 * 2 * 16);
             DeviceMemory x = w.rank(0).context().allocate(16 * 4096)) {
            topk.fill((byte) 0);   // every token to expert 0 (rank 0) twice: fine for a layout
            MoeRank r0 = moe.rank(0);
            DeviceTensor t = DeviceTensor.of(topk, ElementType.INT64, 16, 2);
            MoeHandle h = r0.layout(t);
            r0.dispatch(DeviceTensor.of(x, ElementType.BF16, 16, 2048), null, t, DeviceTensor.of(x, ElementType.FP32, 16, 2), h);
            r0.stream().synchronize();
            MoeTimeoutException e = assertThrows(MoeTimeoutException.class, moe::checkErrors);
            assertEquals(0, e.rank());
            assertEquals(1, e.peer());
            assertTrue(e.getMessage().contains("rank 0 waited for rank 1: its layout exchange counts"), e.getMessage());
            assertTrue(r0.waitNanos(1) > 1_000_000_000L, "the wait on rank 1 is accounted to rank 1");
        }
    }
}
