package io.gda4j.moe;

import io.gda4j.moe.ht.MoeRowPath;
import io.gda4j.moe.check.MoeLowLatencyReferenceCheck;
import io.gda4j.moe.check.MoeReference;
import io.gda4j.moe.check.MoeReferenceCheck;
import io.gda4j.moe.check.MoeRouting;
import io.gda4j.moe.tensor.DeviceTensor;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.world.GpuWorlds;
import io.gda4j.world.LocalWorld;
import io.gda4j.world.WorldConfig;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Refused calls and stale results on 2 ranks sharing GPU 0 (issue 22): a call refused after it reached the GPU
 * retires the handles it could have disturbed, so a later call with one of them is refused on the host instead of
 * hanging the GPU, and the buffer still gives the reference result bit for bit afterwards. The device wait timeout is
 * short (2 s): a call that hangs fails the test at its class timeout instead of waiting on.
 */
@Tag("gpu")
@Timeout(120)
class MoeRefusedCallsGpuTest {
    private static final int[] TOKENS = {48, 64};

    private static LocalWorld world() {
        return MoeGpuTest.world(2, "p2p", Duration.ofSeconds(2));
    }

    private static MoeConfig config() {
        return config(MoeRowPath.SM);
    }

    private static MoeConfig config(MoeRowPath rows) {
        return MoeGpuTest.config(2048, ElementType.BF16, 4, 64, rows);
    }

    /** A valid layout of a new routing on every rank; {@code in[r]} and {@code handles[r]} receive them. */
    private static void layoutEveryRank(MoeBuffer moe, MoeInputs inputs, Random rnd, MoeReference.Input[] in,
                                        MoeHandle[] handles) {
        for (int r = 0; r < in.length; r++) {
            in[r] = inputs.upload(r, MoeRouting.Kind.UNIFORM, TOKENS[r], rnd);
            handles[r] = moe.rank(r).layout(inputs.topk(r, TOKENS[r]));
        }
    }

    /**
     * The sequence of issue 22: a valid layout on every rank, a layout on rank 0 refused for an out-of-range expert
     * index (with as many tokens as the first, and with fewer), then rank 0's dispatch with the handle of its first
     * layout. The refused layout's kernel rewrote rank 0's routing before its check; the dispatch used to announce one
     * routing's counts and walk the other's tokens, and never ended. Now it is refused on the host, no kernel runs,
     * and a valid layout + dispatch + combine on every rank matches the reference.
     */
    @ParameterizedTest(name = "the refused layout has {0} tokens, rows by {1}")
    @CsvSource({"48, SM", "5, SM", "48, COPY_ENGINE"})
    void aDispatchWithAHandleFromBeforeARefusedLayoutIsRefusedOnTheHost(int badTokens, MoeRowPath rows) {
        try (LocalWorld w = world();
             MoeBuffer moe = MoeBuffer.create(w, config(rows));
             MoeReferenceCheck check = new MoeReferenceCheck(moe);
             MoeInputs inputs = new MoeInputs(moe)) {
            Random rnd = new Random(badTokens);
            MoeReference.Input[] in = new MoeReference.Input[2];
            MoeHandle[] handles = new MoeHandle[2];
            layoutEveryRank(moe, inputs, rnd, in, handles);
            String entry = inputs.uploadBad(0, badTokens, badTokens - 1, 3, 32, rnd);
            IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                    () -> moe.rank(0).layout(inputs.badTopk(0, badTokens)));
            assertTrue(bad.getMessage().contains(entry + " is not an expert"), bad.getMessage());

            IllegalStateException stale = assertThrows(IllegalStateException.class, () -> moe.rank(0).dispatch(
                    inputs.x(0, TOKENS[0]), null, inputs.topk(0, TOKENS[0]), inputs.weights(0, TOKENS[0]), handles[0]));
            assertTrue(stale.getMessage().contains("this handle is stale: rank 0 ran a newer layout since"),
                    stale.getMessage());
            assertTrue(stale.getMessage().contains("run layout again on rank 0"), stale.getMessage());
            assertFalse(w.rank(0).device().kernelsMayBeRunning(), "the refused dispatch launched a kernel");

            check.run(MoeRouting.Kind.UNIFORM, 3, TOKENS);
            check.run(MoeRouting.Kind.SKEWED, 4, new int[] {64, 0});
            moe.checkErrors();
        }
    }

    /**
     * A dispatch on every rank, then a refused layout on rank 0: the combine of that dispatch would walk the refused
     * routing's token slots, so rank 0's combine is refused on the host (before any rank combines), and the next
     * valid calls match the reference.
     */
    @Test
    void aCombineAfterARefusedLayoutIsRefusedOnTheHost() {
        try (LocalWorld w = world();
             MoeBuffer moe = MoeBuffer.create(w, config());
             MoeReferenceCheck check = new MoeReferenceCheck(moe);
             MoeInputs inputs = new MoeInputs(moe)) {
            Random rnd = new Random(7);
            MoeReference.Input[] in = new MoeReference.Input[2];
            MoeHandle[] handles = new MoeHandle[2];
            layoutEveryRank(moe, inputs, rnd, in, handles);
            MoeDispatchResult[] d = inputs.dispatch(moe, handles, in);
            inputs.uploadBad(0, TOKENS[0], 0, 0, -2, rnd);
            assertThrows(IllegalArgumentException.class, () -> moe.rank(0).layout(inputs.badTopk(0, TOKENS[0])));
            IllegalStateException stale = assertThrows(IllegalStateException.class,
                    () -> moe.rank(0).combine(inputs.y(0), d[0]));
            assertTrue(stale.getMessage().contains("this handle is stale"), stale.getMessage());
            assertDoesNotThrow(() -> d[0].recvX(), "a layout leaves the received rows alone");
            check.run(MoeRouting.Kind.WITH_NONE, 8, TOKENS);
            moe.checkErrors();
        }
    }

    /** A layout refused on the host (type, shape, token count) reaches no GPU and leaves the current handle valid. */
    @Test
    void aLayoutRefusedBeforeTheGpuKeepsTheHandle() {
        try (LocalWorld w = world();
             MoeBuffer moe = MoeBuffer.create(w, config());
             MoeInputs inputs = new MoeInputs(moe)) {
            Random rnd = new Random(9);
            MoeReference.Input[] in = new MoeReference.Input[2];
            MoeHandle[] handles = new MoeHandle[2];
            layoutEveryRank(moe, inputs, rnd, in, handles);
            MoeRank r0 = moe.rank(0);
            assertThrows(IllegalArgumentException.class, () -> r0.layout(inputs.weights(0, TOKENS[0])), "FP32 top-k");
            DeviceTensor wide = inputs.x(0, 64);   // room for any top-k below
            assertThrows(IllegalArgumentException.class, () -> r0.layout(DeviceTensor.of(wide.pointer(),
                    wide.capacityBytes(), ElementType.INT64, TOKENS[0], 3)), "a top-k of another width");
            assertThrows(IllegalArgumentException.class, () -> r0.layout(DeviceTensor.of(wide.pointer(),
                    wide.capacityBytes(), ElementType.INT64, 65, 4)), "more tokens than maxTokensPerRank");
            MoeDispatchResult[] d = inputs.dispatch(moe, handles, in);
            inputs.combine(moe, d, in, rnd);
            moe.checkErrors();
        }
    }

    /**
     * Every getter of a dispatch result throws once its rank dispatched again (the tensors are shared with the newer
     * call), as does a combine of it; the newer result reads and combines as the reference says.
     */
    @ParameterizedTest(name = "rows by {0}")
    @EnumSource(value = MoeRowPath.class, names = {"SM", "COPY_ENGINE"})
    void anOlderDispatchResultRefusesEveryGetterAndItsCombine(MoeRowPath rows) {
        try (LocalWorld w = world();
             MoeBuffer moe = MoeBuffer.create(w, config(rows));
             MoeInputs inputs = new MoeInputs(moe)) {
            Random rnd = new Random(11);
            MoeReference.Input[] in = new MoeReference.Input[2];
            MoeHandle[] handles = new MoeHandle[2];
            layoutEveryRank(moe, inputs, rnd, in, handles);
            MoeDispatchResult[] first = inputs.dispatch(moe, handles, in);
            MoeDispatchResult[] second = inputs.dispatch(moe, handles, in);
            MoeDispatchResult old = first[1];
            List<Supplier<Object>> getters = List.of(old::recvX, old::recvScales, old::recvTopkIdx,
                    old::recvTopkWeights, old::recvSource, old::localExpertCountsTensor, old::numRecvTokens,
                    old::localExpertCounts, () -> moe.rank(1).combine(inputs.y(1), old));
            for (Supplier<Object> g : getters) {
                IllegalStateException e = assertThrows(IllegalStateException.class, g::get);
                assertTrue(e.getMessage().contains("of dispatch #1: rank 1 dispatched again since (#2)"), e.getMessage());
            }
            inputs.combine(moe, second, in, rnd);
            moe.checkErrors();
        }
    }

    /**
     * A closed buffer refuses every call, through the buffer and through the MoeRank, results and handles taken before
     * the close (their memory is freed: a kernel or a copy there could fault the context), and the heap has its region
     * back.
     */
    @Test
    void aClosedBufferRefusesEveryCallAndReturnsItsHeapRegion() {
        try (LocalWorld w = world();
             MoeInputs inputs = new MoeInputs(w, config().sizing(2))) {
            long free = w.heap().freeBytes();
            MoeBuffer moe = MoeBuffer.create(w, config());
            assertTrue(w.heap().freeBytes() < free);
            Random rnd = new Random(13);
            MoeReference.Input[] in = new MoeReference.Input[2];
            MoeHandle[] handles = new MoeHandle[2];
            layoutEveryRank(moe, inputs, rnd, in, handles);
            MoeDispatchResult[] d = inputs.dispatch(moe, handles, in);
            MoeRank r0 = moe.rank(0);
            moe.close();
            assertEquals(free, w.heap().freeBytes(), "the heap region came back");
            moe.close();   // a second close does nothing
            List<Executable> refused = List.of(() -> moe.rank(0), () -> r0.layout(inputs.topk(0, TOKENS[0])),
                    () -> r0.dispatch(inputs.x(0, TOKENS[0]), null, inputs.topk(0, TOKENS[0]),
                            inputs.weights(0, TOKENS[0]), handles[0]),
                    () -> r0.combine(inputs.y(0), d[0]), d[0]::numRecvTokens, d[0]::recvX, d[0]::localExpertCounts,
                    () -> r0.waitNanos(1), () -> r0.copyToHost(inputs.y(0).pointer(), new byte[8]));
            for (Executable call : refused) {
                IllegalStateException e = assertThrows(IllegalStateException.class, call);
                assertTrue(e.getMessage().contains("closed"), e.getMessage());
            }
            assertFalse(w.rank(0).device().kernelsMayBeRunning(), "a refused call launched a kernel");
        }
    }

    /** As above for the low-latency buffer, a dispatch held across the close included. */
    @Test
    void aClosedLowLatencyBufferRefusesEveryCallAndReturnsItsHeapRegion() {
        try (LocalWorld w = world()) {
            long free = w.heap().freeBytes();
            MoeBuffer ll = MoeBuffer.create(w, MoeLowLatencyGpuTest.config(ElementType.BF16, false,
                    2, 8));
            try (MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll)) {
                int[] tokens = {3, 5};
                check.run(MoeRouting.Kind.UNIFORM, 1, tokens, false);
                MoeLowLatencyDispatch[] d = new MoeLowLatencyDispatch[2];
                for (int r = 0; r < 2; r++) {
                    d[r] = ll.rank(r).lowLatencyDispatch(check.x(r, tokens[r]), check.topkIdx(r, tokens[r]), false);
                }
                MoeRank r0 = ll.rank(0);
                ll.close();
                assertEquals(free, w.heap().freeBytes(), "the heap region came back");
                List<Executable> refused = List.of(() -> ll.rank(0), d[0]::recvX, d[0]::readCounts, d[0]::release,
                        () -> r0.lowLatencyDispatch(check.x(0, 3), check.topkIdx(0, 3), false),
                        () -> r0.lowLatencyCombine(check.y(0), check.topkIdx(0, 3), check.topkWeights(0, 3), d[0],
                                false),
                        () -> r0.waitNanos(1));
                for (Executable call : refused) {
                    IllegalStateException e = assertThrows(IllegalStateException.class, call);
                    assertTrue(e.getMessage().contains("closed"), e.getMessage());
                }
            }
        }
    }

    /**
     * A heap with room for one buffer and a half: made, used and closed 25 times each way (the high-throughput and
     * the low-latency buffer), which a heap that never took a region back ran out of at the second.
     */
    @Test
    @Timeout(300)
    void makingAndClosingBuffersManyTimesDoesNotExhaustTheHeap() {
        MoeConfig llConfig = MoeLowLatencyGpuTest.config(ElementType.BF16, false, 2, 8);
        long most = Math.max(config().sizing(2).heapBytes(), llConfig.lowLatencySizing(2, false).heapBytes());
        GpuWorlds.assumeGpu();
        try (LocalWorld w = LocalWorld.create(WorldConfig.builder().gpus(GpuWorlds.gpus(2, true))
                .heapSizeBytes((most * 3 / 2 + 4095) / 4096 * 4096).waitTimeout(Duration.ofSeconds(2))
                .transport("p2p").build())) {
            long free = w.heap().freeBytes();
            for (int i = 0; i < 25; i++) {
                try (MoeBuffer moe = MoeBuffer.create(w, config()); MoeReferenceCheck check = new MoeReferenceCheck(moe)) {
                    check.run(MoeRouting.Kind.SKEWED, i, TOKENS);
                }
                try (MoeBuffer ll = MoeBuffer.create(w, llConfig);
                     MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll)) {
                    check.run(MoeRouting.Kind.UNIFORM, i, new int[] {8, 5}, i % 2 == 0);
                }
                assertEquals(free, w.heap().freeBytes(), "round " + i);
            }
        }
    }

    /**
     * A low-latency combine's output lives in its buffer's state, which the combine two calls later (the next on the
     * same buffer) rewrites: from then on output() throws, and the newer output matches the reference.
     */
    @Test
    void aLowLatencyCombineOutputIsRefusedOnceTheNextCombineOnItsBufferWasQueued() {
        try (LocalWorld w = world();
             MoeBuffer ll = MoeBuffer.create(w, MoeLowLatencyGpuTest.config(ElementType.BF16,
                     false, 2, 8));
             MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll)) {
            int[] tokens = {6, 8};
            MoeLowLatencyReferenceCheck.Case c = check.prepare(MoeRouting.Kind.UNIFORM, 17, tokens);
            MoeLowLatencyCombine[][] out = new MoeLowLatencyCombine[3][2];
            for (int call = 0; call < 3; call++) {
                MoeLowLatencyDispatch[] d = new MoeLowLatencyDispatch[2];
                for (int r = 0; r < 2; r++) {
                    d[r] = ll.rank(r).lowLatencyDispatch(check.x(r, tokens[r]), check.topkIdx(r, tokens[r]), false);
                }
                for (int r = 0; r < 2; r++) {
                    out[call][r] = ll.rank(r).lowLatencyCombine(check.y(r), check.topkIdx(r, tokens[r]),
                            check.topkWeights(r, tokens[r]), d[r], false);
                }
                if (call == 1) {
                    assertDoesNotThrow(() -> out[0][0].output(), "the next combine used the other buffer");
                }
            }
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> out[0][1].output());
            assertTrue(e.getMessage().contains("the combine of dispatch #2 used buffer 0 since"), e.getMessage());
            check.expectCombine(c, new DeviceTensor[] {out[2][0].output(), out[2][1].output()}, 0);
            check.expectCombine(c, new DeviceTensor[] {out[1][0].output(), out[1][1].output()}, 0);
        }
    }
}
