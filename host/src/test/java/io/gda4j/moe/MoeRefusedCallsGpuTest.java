package io.gda4j.moe;

import io.gda4j.world.LocalWorld;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
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
        return MoeGpuTest.config(2048, ElementType.BF16, 4, 64);
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
    @ParameterizedTest(name = "the refused layout has {0} tokens")
    @ValueSource(ints = {48, 5})
    void aDispatchWithAHandleFromBeforeARefusedLayoutIsRefusedOnTheHost(int badTokens) {
        try (LocalWorld w = world();
             MoeBuffer moe = MoeBuffer.create(w, config());
             MoeSelfCheck check = new MoeSelfCheck(moe);
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
             MoeSelfCheck check = new MoeSelfCheck(moe);
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
    @Test
    void anOlderDispatchResultRefusesEveryGetterAndItsCombine() {
        try (LocalWorld w = world();
             MoeBuffer moe = MoeBuffer.create(w, config());
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
}
