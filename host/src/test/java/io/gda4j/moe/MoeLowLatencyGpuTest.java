package io.gda4j.moe;

import io.gda4j.transport.Transport;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.moe.check.MoeLowLatencyReferenceCheck;
import io.gda4j.moe.check.MoeRouting;
import io.gda4j.moe.ll.LowLatencyRank;
import io.gda4j.moe.ll.LowLatencySizing;
import io.gda4j.moe.tensor.DeviceTensor;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.world.GpuWorlds;
import io.gda4j.world.LocalWorld;
import io.gda4j.world.WorldConfig;
import jcuda.driver.CUgraph;
import jcuda.driver.CUgraphExec;
import jcuda.driver.CUstreamCaptureMode;
import jcuda.driver.JCudaDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Low-latency dispatch and combine on the GPU against {@link MoeLowLatencyReference}, bit for bit
 * ({@link MoeLowLatencyReferenceCheck}): every routing case (skewed, -1 entries, every token on one expert, repeated
 * experts), BF16, FP8 and FP8 with power-of-two scales, with and without the send/receive split, 2 and 4 ranks sharing
 * GPU 0, 1..512 tokens, hidden 384 (an odd number of 128-channel blocks), over p2p and over ibgda through the emulated
 * NIC (proxy: MoeLowLatencyProxyGpuTest in the proxy module), under the default protocol: the tagged one over p2p,
 * the counted one over ibgda (MoeLowLatencyCountedGpuTest: the same over p2p under the counted one, asked for); the
 * tagged dispatch in one kernel and as its two halves; CUDA-graph capture with 100 replays of new data; 100
 * repetitions with one hash; bad input refused before any kernel; a missing peer named by the timeout, in the dispatch
 * and in the combine (a barrier over all ranks).
 */
@Tag("gpu")
@Timeout(300)
class MoeLowLatencyGpuTest {
    private String protocolWas;

    /**
     * The protocol this class's buffers ask for: null, the default (tagged where every pair is direct);
     * MoeLowLatencyCountedGpuTest runs this class's tests under the counted one.
     */
    LowLatencySizing.Protocol protocol() {
        return null;
    }

    /** Whether a p2p world of this class runs the tagged protocol. */
    boolean tagged() {
        return protocol() != LowLatencySizing.Protocol.COUNTED;
    }

    @BeforeEach
    void askForTheProtocol() {
        protocolWas = TestProperties.set(LowLatencySizing.PROTOCOL_PROP_NAME,
                protocol() == null ? null : protocol().name().toLowerCase(Locale.ROOT));
    }

    @AfterEach
    void restoreTheProtocol() {
        TestProperties.set(LowLatencySizing.PROTOCOL_PROP_NAME, protocolWas);
    }

    static MoeConfig config(ElementType type, boolean pow2, int topK, int maxTokens) {
        return MoeConfig.lowLatencyBuilder().hidden(2048).numExperts(32).topK(topK).powerOfTwoScales(pow2)
                .lowLatency(maxTokens, type).build();
    }

    /** Two ranks over p2p on two GPUs, or sharing one, with a heap sized for {@code config}. */
    static LocalWorld twoRanksOverP2p(MoeConfig config) {
        GpuWorlds.assumeGpu();
        return LocalWorld.create(WorldConfig.builder().gpus(GpuWorlds.gpus(2, true))
                .heapSizeBytes(config.lowLatencySizing(2).heapBytes() + (64L << 20)).waitTimeout(Duration.ofSeconds(20))
                .transport("p2p").build());
    }

    static Stream<Arguments> p2pCases() {
        List<Arguments> a = new ArrayList<>();
        int i = 0;
        for (MoeRouting.Kind kind : MoeRouting.Kind.values()) {
            for (int variant = 0; variant < 3; variant++) {
                ElementType type = variant == 0 ? ElementType.BF16 : ElementType.FP8_E4M3;
                a.add(Arguments.of(kind, type, variant == 2, 2 + 2 * (i % 2), 1 + (i * 3) % 8, i % 2 == 1));
                i++;
            }
        }
        return a.stream();
    }

    @ParameterizedTest(name = "p2p {0} {1} pow2 {2} {3} ranks top-{4} split {5}")
    @MethodSource("p2pCases")
    void p2pMatchesTheReference(MoeRouting.Kind kind, ElementType type, boolean pow2, int ranks, int topK,
                                boolean split) {
        try (LocalWorld w = MoeGpuTest.world(ranks, "p2p", Duration.ofSeconds(20));
             MoeBuffer ll = MoeBuffer.create(w, config(type, pow2, topK, 64));
             MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll)) {
            assertEquals(tagged(), ll.lowLatency().sizing().tagged(), "protocol");
            Random rnd = new Random(kind.ordinal() * 31L + topK);
            check.run(kind, rnd.nextLong(), MoeRouting.tokenCounts(ranks, 64, rnd), split);
            // the next call takes the other buffer; the one after, the first again (sequence numbers carry over)
            check.run(kind, rnd.nextLong(), MoeRouting.tokenCounts(ranks, 64, rnd), !split);
            check.run(kind, rnd.nextLong(), MoeRouting.tokenCounts(ranks, 64, rnd), split);
        }
    }

    /**
     * The counted protocol's row paths over p2p (asked for here, whatever the class's protocol): rows gathered per
     * (token, rank) into the receiver's token stage and rows stored per expert give the same bits: the same config (2
     * ranks, top-8, where gathering is the default) with each forced, every routing case, with and without the split,
     * with 2 ranks and with 4. Every other rank sends at least 64 tokens (a call that gathers, where the buffer does)
     * and the rest fewer (one that does not), in turn, so a receiver gets both kinds in one call.
     */
    @ParameterizedTest(name = "gather rows {0}, {1} ranks")
    @CsvSource({"true, 2", "false, 2", "true, 4"})
    void gatheredAndPerExpertRowsBothMatchTheReference(boolean gather, int ranks) {
        String was = System.getProperty(LowLatencySizing.GATHER_ROWS_PROP_NAME);
        System.setProperty(LowLatencySizing.GATHER_ROWS_PROP_NAME, Boolean.toString(gather));
        TestProperties.set(LowLatencySizing.PROTOCOL_PROP_NAME, "counted");   // put back after each test
        try (LocalWorld w = MoeGpuTest.world(ranks, "p2p", Duration.ofSeconds(20));
             MoeBuffer ll = MoeBuffer.create(w, config(ElementType.FP8_E4M3, false, 8, 128));
             MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll)) {
            assertEquals(gather, ll.lowLatency().sizing().gathersRows());
            Random rnd = new Random(gather ? 11 : 12);
            for (MoeRouting.Kind kind : MoeRouting.Kind.values()) {
                int least = LowLatencySizing.GATHER_MIN_TOKENS;
                int[] counts = new int[ranks];
                for (int r = 0; r < ranks; r++) {
                    boolean many = (r + kind.ordinal()) % 2 == 0;
                    counts[r] = many ? least + rnd.nextInt(128 - least + 1) : rnd.nextInt(least);
                }
                check.run(kind, rnd.nextLong(), counts, kind.ordinal() % 2 == 1);
            }
        } finally {
            if (was == null) {
                System.clearProperty(LowLatencySizing.GATHER_ROWS_PROP_NAME);
            } else {
                System.setProperty(LowLatencySizing.GATHER_ROWS_PROP_NAME, was);
            }
        }
    }

    /**
     * DeepEP's row shape (hidden 7168, top-8, FP8; BF16 at 31 tokens) at 1..512 tokens; the heap sized from the
     * config. At this hidden size a token takes two blocks of the dispatch send (its parts) while one wave holds
     * them (here 1, 2 and 31 tokens), and one block beyond. The combines read the expert outputs from the heap
     * (pulling), but at 31 tokens, where the rows are pushed.
     */
    @ParameterizedTest(name = "{0} tokens per rank")
    @ValueSource(ints = {1, 2, 31, 128, 512})
    void oneTo512Tokens(int tokens) {
        MoeConfig config = MoeConfig.lowLatencyBuilder().hidden(7168).numExperts(16).topK(8)
                .lowLatency(512, tokens == 31 ? ElementType.BF16 : ElementType.FP8_E4M3).build();
        try (LocalWorld w = twoRanksOverP2p(config);
             MoeBuffer ll = MoeBuffer.create(w, config);
             MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll, tokens != 31)) {
            check.run(MoeRouting.Kind.UNIFORM, tokens, new int[] {tokens, tokens}, false);
        }
    }

    /**
     * The tagged dispatch without the split in both its forms ({@value LowLatencyRank#ONE_KERNEL_DISPATCH_PROP_NAME}):
     * as one kernel past one wave of its send units (512 tokens of DeepEP's row shape: 66 blocks on a shared H200 for
     * 514 units, each block sending several tokens before it receives), and as its two halves back to back at few
     * tokens (where auto takes one kernel), 2 and 4 ranks, with split calls between them on the same buffers.
     */
    @ParameterizedTest(name = "one kernel {0}, {1} tokens, {2} ranks")
    @CsvSource({"true, 512, 2", "false, 1, 2", "false, 33, 4", "true, 200, 4"})
    void theTaggedDispatchInOneKernelAndInTwo(boolean oneKernel, int tokens, int ranks) {
        TestProperties.set(LowLatencyRank.ONE_KERNEL_DISPATCH_PROP_NAME, Boolean.toString(oneKernel));
        MoeConfig config = MoeConfig.lowLatencyBuilder().hidden(7168).numExperts(32).topK(8)
                .lowLatency(tokens, ElementType.FP8_E4M3).build();
        try (LocalWorld w = MoeGpuTest.world(ranks, "p2p", Duration.ofSeconds(20),
                config.lowLatencySizing(ranks).heapBytes() + (64L << 20));
             MoeBuffer ll = MoeBuffer.create(w, config);
             MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll)) {
            assertTrue(ll.lowLatency().sizing().tagged(), "the tagged protocol");
            Random rnd = new Random(tokens);
            for (int i = 0; i < 4; i++) {
                int[] counts = new int[ranks];
                for (int r = 0; r < ranks; r++) {
                    counts[r] = r == i % ranks ? tokens : Math.max(1, tokens - 1 - rnd.nextInt(tokens));
                }
                check.run(MoeRouting.Kind.values()[i % MoeRouting.Kind.values().length], rnd.nextLong(), counts,
                        i % 2 == 1);
            }
        } finally {
            TestProperties.set(LowLatencyRank.ONE_KERNEL_DISPATCH_PROP_NAME, null);
        }
    }

    /**
     * Two ranks sharing GPU 0 with many experts, where a dispatch grid of every local expert would cover every SM:
     * each rank's grid stays within its share, so the other rank's kernels start (500 experts and more once timed out
     * here). Also the route kernel's counting sort past one round: more tokens than its block has threads (1030 of
     * 1024, seven chunk groups, and the dispatch send's blocks taking several tokens each), more experts than one
     * round of its prefix sum (1000), and more than one window of its shared memory (6000 experts at 300 tokens:
     * three windows of 2560); with and without the split. At 64 and 40 tokens the dispatch's blocks route their own
     * tokens (a block each), over 500 and 6000 experts (24000 bytes of shared memory a block).
     */
    @ParameterizedTest(name = "{0} experts, {1} tokens")
    @CsvSource({"64, 1030", "500, 64", "1000, 1030", "6000, 40", "6000, 300"})
    void manyExpertsAndManyTokensOnASharedGpu(int experts, int tokens) {
        MoeConfig config = MoeConfig.lowLatencyBuilder().hidden(128).numExperts(experts).topK(8)
                .lowLatency(tokens, ElementType.FP8_E4M3).build();
        try (LocalWorld w = twoRanksOverP2p(config);
             MoeBuffer ll = MoeBuffer.create(w, config);
             MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll)) {
            check.run(MoeRouting.Kind.SKEWED, 7, new int[] {tokens, tokens - 3}, false);
            check.run(MoeRouting.Kind.REPEATS, 8, new int[] {tokens - 1, tokens}, true);
        }
    }

    /**
     * Small calls route their tokens in the dispatch's own blocks (a block per token), large ones (more tokens than
     * one wave of blocks: 300 here, on one GPU or two) with the route kernel first. Both leave the same state, and a
     * buffer's counters of rows sent come in two copies by the parity of the call's sequence number, each zeroed by
     * the call before on that buffer: so the two kinds of call alternate on both buffers here, split and whole.
     */
    @Test
    void callsRoutedByTheRouteKernelAndByTheDispatchAlternate() {
        MoeConfig config = MoeConfig.lowLatencyBuilder().hidden(128).numExperts(64).topK(8)
                .lowLatency(300, ElementType.FP8_E4M3).build();
        try (LocalWorld w = twoRanksOverP2p(config);
             MoeBuffer ll = MoeBuffer.create(w, config);
             MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll)) {
            int[] tokens = {5, 300, 7, 9, 300, 300, 1, 2};
            for (int i = 0; i < tokens.length; i++) {
                check.run(MoeRouting.Kind.values()[i % MoeRouting.Kind.values().length], 40 + i,
                        new int[] {tokens[i], Math.max(1, tokens[i] - 1)}, i % 3 == 1);
            }
        }
    }

    /**
     * hidden = 3 x 128: the combine's last round of 256 channels has channels for lanes 0..15 only (its shuffles
     * once ran in that divergent loop), and the dispatch casts an odd number of FP8 blocks.
     */
    @ParameterizedTest(name = "hidden 384 {0}")
    @ValueSource(strings = {"BF16", "FP8_E4M3"})
    void aHiddenSizeOfAnOddNumberOf128ChannelBlocks(ElementType type) {
        MoeConfig config = MoeConfig.lowLatencyBuilder().hidden(384).numExperts(8).topK(3).lowLatency(16, type).build();
        try (LocalWorld w = MoeGpuTest.world(2, "p2p", Duration.ofSeconds(20));
             MoeBuffer ll = MoeBuffer.create(w, config);
             MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll)) {
            check.run(MoeRouting.Kind.REPEATS, 5, new int[] {16, 11}, false);
            check.run(MoeRouting.Kind.SKEWED, 6, new int[] {7, 16}, true);
        }
    }

    @ParameterizedTest(name = "ibgda (emulated NIC) {0} {1} ranks")
    @MethodSource("transportCases")
    void ibgdaMatchesTheReference(ElementType type, int ranks) {
        try (LocalWorld w = MoeGpuTest.world(ranks, Transport.IBGDA.label(), Duration.ofSeconds(30))) {
            String tooFewQueues = MoeBuffer.queueProblem(w);
            if (tooFewQueues != null) {
                IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                        () -> MoeBuffer.create(w, config(type, false, 4, 32)).close());
                assertEquals(tooFewQueues, refused.getMessage());
                return;
            }
            try (MoeBuffer ll = MoeBuffer.create(w, config(type, false, 4, 32));
                 MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll)) {
                assertFalse(ll.lowLatency().sizing().tagged(), "ibgda pairs run the counted protocol");
                Random rnd = new Random(ranks);
                for (MoeRouting.Kind kind : new MoeRouting.Kind[] {MoeRouting.Kind.SKEWED,
                        MoeRouting.Kind.ONE_EXPERT, MoeRouting.Kind.REPEATS}) {
                    check.run(kind, rnd.nextLong(), MoeRouting.tokenCounts(ranks, 32, rnd), kind.ordinal() % 2 == 0);
                }
            }
        }
    }

    static Stream<Arguments> transportCases() {
        return Stream.of(Arguments.of(ElementType.BF16, 2), Arguments.of(ElementType.FP8_E4M3, 2),
                Arguments.of(ElementType.FP8_E4M3, 4));
    }

    /** Two dispatches outstanding (send the next batch before combining this one), in both orders of receive. */
    @Test
    void twoOutstandingDispatchesAndAThirdRefused() {
        try (LocalWorld w = MoeGpuTest.world(2, "p2p", Duration.ofSeconds(20));
             MoeBuffer ll = MoeBuffer.create(w, config(ElementType.FP8_E4M3, false, 4, 16));
             MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll)) {
            int[] tokens = {16, 9};
            MoeLowLatencyReferenceCheck.Case c0 = check.prepare(MoeRouting.Kind.UNIFORM, 1, tokens);
            MoeLowLatencyDispatch[] d0 = new MoeLowLatencyDispatch[2];
            for (int r = 0; r < 2; r++) {
                d0[r] = ll.rank(r).lowLatencyDispatch(check.x(r, tokens[r]), check.topkIdx(r, tokens[r]), true);
            }
            for (int r = 0; r < 2; r++) {
                ll.rank(r).stream().synchronize();   // the sends read the inputs; the next prepare overwrites them
            }
            MoeLowLatencyReferenceCheck.Case c1 = check.prepare(MoeRouting.Kind.SKEWED, 2, tokens);
            MoeLowLatencyDispatch[] d1 = new MoeLowLatencyDispatch[2];
            for (int r = 0; r < 2; r++) {
                d1[r] = ll.rank(r).lowLatencyDispatch(check.x(r, tokens[r]), check.topkIdx(r, tokens[r]), true);
            }
            for (int r = 0; r < 2; r++) {
                int rr = r;
                IllegalStateException third = assertThrows(IllegalStateException.class,
                        () -> ll.rank(rr).lowLatencyDispatch(check.x(rr, tokens[rr]), check.topkIdx(rr, tokens[rr]),
                                true));
                assertTrue(third.getMessage().contains("dispatch #0"), third.getMessage());
                d1[r].receive();
                d0[r].receive();
            }
            check.expectDispatch(c1, new int[] {1, 1});
            check.expectDispatch(c0, new int[] {0, 0});
            for (int r = 0; r < 2; r++) {
                d0[r].release();
                d1[r].release();
            }
        }
    }

    @Test
    @Timeout(600)
    void aHundredRepetitionsGiveTheSameHash() {
        try (LocalWorld w = MoeGpuTest.world(4, "p2p", Duration.ofSeconds(20));
             MoeBuffer ll = MoeBuffer.create(w, config(ElementType.FP8_E4M3, true, 8, 64));
             MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll)) {
            int[] tokens = {64, 17, 0, 64};
            long first = check.run(MoeRouting.Kind.SKEWED, 42, tokens, false);
            for (int i = 1; i < 100; i++) {
                assertEquals(first, check.run(MoeRouting.Kind.SKEWED, 42, tokens, i % 2 == 0), "repetition " + i);
            }
        }
    }

    /**
     * Dispatch + combine of every rank captured in one CUDA graph per rank, replayed 100 times with new inputs each
     * time (same shapes): the sequence numbers live on the GPU, so each replay is a new call to the peers. From the
     * heap, each replay's expert outputs are written to the captured call's combine input, which the combines pull.
     */
    @ParameterizedTest(name = "combine from the heap {0}, one-kernel dispatch {1}")
    @CsvSource({"false, auto", "true, auto", "true, false"})
    @Timeout(600)
    void aCapturedGraphReplays100TimesWithNewData(boolean fromHeap, String oneKernel) {
        TestProperties.set(LowLatencyRank.ONE_KERNEL_DISPATCH_PROP_NAME, oneKernel);
        try (LocalWorld w = MoeGpuTest.world(2, "p2p", Duration.ofSeconds(20));
             MoeBuffer ll = MoeBuffer.create(w, config(ElementType.FP8_E4M3, false, 8, 32));
             MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll, fromHeap)) {
            int[] tokens = {32, 20};
            CUgraphExec[] exec = new CUgraphExec[2];
            DeviceTensor[] out = new DeviceTensor[2];
            int[] buffers = new int[2];
            for (int r = 0; r < 2; r++) {
                MoeRank m = ll.rank(r);
                m.rank().context().makeCurrent();
                JCudaDriver.cuStreamBeginCapture(m.stream().handle(), CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
                MoeLowLatencyDispatch d = m.lowLatencyDispatch(check.x(r, tokens[r]), check.topkIdx(r, tokens[r]),
                        false);
                buffers[r] = d.buffer();
                out[r] = m.lowLatencyCombine(check.y(r, d), check.topkIdx(r, tokens[r]), check.topkWeights(r,
                        tokens[r]), d,
                        false).output();
                CUgraph graph = new CUgraph();
                JCudaDriver.cuStreamEndCapture(m.stream().handle(), graph);
                exec[r] = new CUgraphExec();
                JCudaDriver.cuGraphInstantiate(exec[r], graph, 0);
                JCudaDriver.cuGraphDestroy(graph);
            }
            assertFalse(w.rank(0).device().kernelsMayBeRunning(), "capture queued nothing");
            try {
                for (int i = 0; i < 100; i++) {
                    MoeLowLatencyReferenceCheck.Case c = check.prepare(MoeRouting.Kind.values()[i % 7], i, tokens);
                    if (fromHeap) {
                        check.writeCombineInputs(c, buffers);
                    }
                    for (int r = 0; r < 2; r++) {
                        JCudaDriver.cuGraphLaunch(exec[r], ll.rank(r).stream().handle());
                    }
                    long h = check.expectDispatch(c, buffers);
                    check.expectCombine(c, out, h);
                }
            } finally {
                for (CUgraphExec e : exec) {
                    JCudaDriver.cuGraphExecDestroy(e);
                }
            }
        } finally {
            TestProperties.set(LowLatencyRank.ONE_KERNEL_DISPATCH_PROP_NAME, null);
        }
    }

    @Test
    void badInputIsRefusedBeforeAnyKernel() {
        try (LocalWorld w = MoeGpuTest.world(2, "p2p", Duration.ofSeconds(10));
             MoeBuffer ll = MoeBuffer.create(w, config(ElementType.FP8_E4M3, false, 2, 8));
             MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll);
             DeviceMemory big = w.rank(0).context().allocate(16L * 2048 * 2)) {
            MoeRank r0 = ll.rank(0);
            IllegalArgumentException many = assertThrows(IllegalArgumentException.class, () -> r0.lowLatencyDispatch(
                    DeviceTensor.of(big, ElementType.BF16, 9, 2048), DeviceTensor.of(big, ElementType.INT64, 9, 2), false));
            assertTrue(many.getMessage().contains("maxTokensPerRank = 8"), many.getMessage());
            assertThrows(IllegalArgumentException.class, () -> r0.lowLatencyDispatch(DeviceTensor.of(big,
                    ElementType.FP8_E4M3, 4,
                    2048), check.topkIdx(0, 4), false), "x must be BF16");
            assertThrows(IllegalArgumentException.class, () -> r0.lowLatencyDispatch(check.x(0, 4), check.topkIdx(0, 3),
                    false),
                    "top-k rows must match the tokens");
            assertThrows(IllegalArgumentException.class, () -> r0.lowLatencyDispatch(check.x(0, 4),
                    DeviceTensor.of(big, ElementType.INT32, 4, 2), false), "top-k must be INT64");
            assertFalse(w.rank(0).device().kernelsMayBeRunning(), "nothing ran");
        }
    }

    /** An index out of range cannot be seen without a host sync: the call completes, and the check names it. */
    @Test
    void anExpertIndexOutOfRangeIsNamedAndTreatedAsNone() {
        try (LocalWorld w = MoeGpuTest.world(2, "p2p", Duration.ofSeconds(10));
             MoeBuffer ll = MoeBuffer.create(w, config(ElementType.BF16, false, 2, 8));
             MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll)) {
            int[] tokens = {3, 3};
            check.prepare(MoeRouting.Kind.UNIFORM, 3, tokens);
            long[] idx = {0, 1, 2, 32, 5, -1};   // token 1 slot 1 names expert 32 of 32
            check.overwriteTopk(0, idx);
            MoeLowLatencyDispatch[] d = new MoeLowLatencyDispatch[2];
            for (int r = 0; r < 2; r++) {
                d[r] = ll.rank(r).lowLatencyDispatch(check.x(r, 3), check.topkIdx(r, 3), false);
            }
            IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, d[0]::checkRouting);
            assertTrue(bad.getMessage().contains("topkIdx[1][1]"), bad.getMessage());
            d[1].checkRouting();
            ll.checkErrors();
        }
    }

    /**
     * The combine's receive half is a barrier over all ranks (what makes reusing a buffer two calls later safe): rank
     * 0, whose tokens all went to its own experts, still waits for rank 1's combine, and names it when it never comes.
     */
    @Test
    void theCombineWaitsForEveryRankEvenOneItSentNothingTo() {
        try (LocalWorld w = MoeGpuTest.world(2, "p2p", Duration.ofSeconds(2));
             MoeBuffer ll = MoeBuffer.create(w, config(ElementType.BF16, false, 2, 8));
             MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll)) {
            int[] tokens = {2, 2};
            check.prepare(MoeRouting.Kind.UNIFORM, 5, tokens);
            check.overwriteTopk(0, new long[] {0, -1, 1, 0});   // experts 0..15 live on rank 0
            check.overwriteTopk(1, new long[] {2, 3, 4, -1});
            MoeLowLatencyDispatch[] d = new MoeLowLatencyDispatch[2];
            for (int r = 0; r < 2; r++) {
                d[r] = ll.rank(r).lowLatencyDispatch(check.x(r, 2), check.topkIdx(r, 2), false);
            }
            MoeRank r0 = ll.rank(0);
            r0.lowLatencyCombine(check.y(0), check.topkIdx(0, 2), check.topkWeights(0, 2), d[0], false);
            r0.stream().synchronize();
            MoeTimeoutException e = assertThrows(MoeTimeoutException.class, ll::checkErrors);
            assertEquals(0, e.rank());
            assertEquals(1, e.peer());
            assertTrue(e.getMessage().contains("combine flag"), e.getMessage());
        }
    }

    /**
     * Rank 1 stops after two whole calls: rank 0's next dispatch takes buffer 0 again, where every word rank 1 wrote
     * for the first call still lies. It must wait for this call's words and give up naming rank 1, never take those
     * (a count of an older sequence number, or a tagged word with an older call's tag).
     */
    @Test
    void wordsLeftByAnOlderCallAreNeverTaken() {
        try (LocalWorld w = MoeGpuTest.world(2, "p2p", Duration.ofSeconds(2));
             MoeBuffer ll = MoeBuffer.create(w, config(ElementType.FP8_E4M3, false, 4, 8));
             MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll)) {
            check.run(MoeRouting.Kind.UNIFORM, 1, new int[] {8, 8}, false);
            check.run(MoeRouting.Kind.SKEWED, 2, new int[] {8, 8}, true);
            check.prepare(MoeRouting.Kind.UNIFORM, 1, new int[] {8, 8});
            MoeRank r0 = ll.rank(0);
            MoeLowLatencyDispatch d = r0.lowLatencyDispatch(check.x(0, 8), check.topkIdx(0, 8), false);
            assertEquals(0, d.buffer());
            r0.stream().synchronize();
            MoeTimeoutException e = assertThrows(MoeTimeoutException.class, ll::checkErrors);
            assertEquals(0, e.rank());
            assertEquals(1, e.peer());
            assertTrue(e.getMessage().contains("rank 0 waited for rank 1"), e.getMessage());
        }
    }

    /** Rank 1 never dispatches: rank 0's receive gives up after the world's timeout, naming rank 1. */
    @Test
    void aRankThatNeverJoinsIsNamedByTheTimeout() {
        try (LocalWorld w = MoeGpuTest.world(2, "p2p", Duration.ofSeconds(2));
             MoeBuffer ll = MoeBuffer.create(w, config(ElementType.BF16, false, 2, 8));
             MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll)) {
            check.prepare(MoeRouting.Kind.UNIFORM, 4, new int[] {8, 8});
            MoeRank r0 = ll.rank(0);
            r0.lowLatencyDispatch(check.x(0, 8), check.topkIdx(0, 8), false);
            r0.stream().synchronize();
            MoeTimeoutException e = assertThrows(MoeTimeoutException.class, ll::checkErrors);
            assertEquals(0, e.rank());
            assertEquals(1, e.peer());
            assertTrue(e.getMessage().contains("rank 0 waited for rank 1"), e.getMessage());
            assertTrue(r0.waitNanos(1) > 1_000_000_000L, "the wait is accounted to rank 1");
        }
    }
}
