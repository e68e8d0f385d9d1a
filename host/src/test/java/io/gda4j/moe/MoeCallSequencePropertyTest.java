package io.gda4j.moe;

import io.gda4j.moe.ht.MoeRowPath;
import io.gda4j.cuda.Cuda;
import io.gda4j.moe.check.MoeLowLatencyReferenceCheck;
import io.gda4j.moe.check.MoeReference;
import io.gda4j.moe.check.MoeReferenceCheck;
import io.gda4j.moe.check.MoeRouting;
import io.gda4j.moe.ll.LowLatencyRank;
import io.gda4j.moe.ll.LowLatencySizing;
import io.gda4j.moe.tensor.DeviceTensor;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.world.GpuWorlds;
import io.gda4j.world.LocalWorld;
import io.gda4j.world.WorldConfig;
import net.jqwik.api.AfterFailureMode;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.Tag;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterProperty;
import net.jqwik.api.lifecycle.BeforeProperty;
import net.jqwik.api.lifecycle.LifecycleContext;
import net.jqwik.api.lifecycle.SkipExecutionHook;
import net.jqwik.api.state.Action;
import net.jqwik.api.state.ActionChain;
import net.jqwik.api.state.Transformer;
import org.junit.jupiter.api.function.Executable;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Random sequences of valid and invalid public MoE calls on 2 ranks sharing GPU 0 (issue 22): layouts with valid and
 * out-of-range top-k, dispatches with current and stale handles, combines with current and stale results, results
 * read after a newer dispatch, low-latency calls with a bad expert index and a third outstanding dispatch, and closes
 * followed by calls on the closed buffer. Each step must finish, or fail with the exception the model predicts, within
 * the device wait timeout (1 s) and some slack; afterwards a valid layout + dispatch + combine on every rank (and a
 * low-latency dispatch + combine) must match the Java reference bit for bit, in a new buffer where the old one was
 * closed, and every heap region must be back. The tries take the row paths in turn and, every other pair of tries,
 * the tagged low-latency protocol (the default), whose whole dispatch every other such pair runs as its two halves.
 *
 * <p>Each step is a world-level one: a call every rank must make (dispatch, combine) is issued on every rank, rank 0
 * first; when rank 0's is refused on the host the other ranks do not make it, as a driver that stops at the first
 * refusal would, so no rank's kernel is left waiting for a peer while the host waits on another (see README, "Ranks
 * that share a GPU"). A layout is such a call too (its exchange waits for every rank's): when rank 0's is refused,
 * on the GPU or on the host, rank 1 does not lay out.
 *
 * <p>jqwik runs this property, not Jupiter, so Jupiter's {@code @Timeout} and the suite's default timeout do not apply:
 * each step, the closing checks and the close run under JUnit's
 * {@link org.junit.jupiter.api.Assertions#assertTimeoutPreemptively} ({@link #STEP_LIMIT}), in a thread of their own
 * (jqwik generates the next step in its own thread, which must stay free). A step that hangs leaves that thread (a
 * daemon) blocked in the driver and fails the try; shrinking is off, since every later try on that GPU would then
 * fail for the hang's sake.
 */
@Tag("gpu")
@AddLifecycleHook(MoeCallSequencePropertyTest.NeedsGpu.class)
class MoeCallSequencePropertyTest {
    private static final Duration WAIT = Duration.ofSeconds(1);
    /** The most one step may take: a device wait, and host copies and reference checks of a few rows. */
    static final Duration STEP_LIMIT = WAIT.plusSeconds(10);
    private static final int RANKS = 2;
    /** Tries so far: each try's row path and low-latency protocol follow from its number ({@link Calls}). */
    private static final AtomicInteger TRIES = new AtomicInteger();

    private LocalWorld world;
    private long heapFree;
    private Calls latest;

    /** Skips the property, saying why, where no CUDA device exists (as GpuWorlds.assumeGpu does for Jupiter). */
    static final class NeedsGpu implements SkipExecutionHook {
        @Override
        public SkipResult shouldBeSkipped(LifecycleContext context) {
            if (!Cuda.status().available()) {
                return SkipResult.skip("no CUDA device: " + Cuda.status().reason());
            }
            return Cuda.deviceCount() > 0 ? SkipResult.doNotSkip() : SkipResult.skip("no CUDA device visible");
        }
    }

    @BeforeProperty
    void openWorld() {
        world = LocalWorld.create(WorldConfig.builder().gpus(GpuWorlds.gpus(RANKS, true)).heapSizeBytes(256L << 20)
                .waitTimeout(WAIT).transport("p2p").build());
        heapFree = world.heap().freeBytes();
    }

    @AfterProperty
    void closeWorld() {
        if (world != null) {
            world.close();
        }
    }

    @Property(tries = 20, shrinking = ShrinkingMode.OFF, afterFailure = AfterFailureMode.SAMPLE_FIRST)
    void everyCallEndsInTimeAndTheNextValidCallsMatchTheReference(@ForAll("sequences") ActionChain<Calls> chain)
            throws Throwable {
        Throwable failure = null;
        try {
            Calls end = chain.run();
            end.expectTheNextValidCallsToMatchTheReference();
        } catch (Throwable t) {
            failure = t;
        }
        if (latest != null) {
            Calls done = latest;
            latest = null;
            try {
                within("closing the buffers", done::close);
            } catch (Throwable t) {
                if (failure == null) {
                    failure = t;
                } else {
                    failure.addSuppressed(t);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
        assertEquals(heapFree, world.heap().freeBytes(), "every heap region came back");
    }

    /** Runs {@code body} in a thread of its own, failing (naming {@code what}) when it takes over {@link #STEP_LIMIT}. */
    static void within(String what, Runnable body) {
        assertTimeoutPreemptively(STEP_LIMIT, body::run, () -> what + " ran past " + STEP_LIMIT.toMillis()
                + " ms: a call hung beyond the device wait timeout (" + WAIT.toMillis() + " ms)");
    }

    @Provide
    Arbitrary<ActionChain<Calls>> sequences() {
        return ActionChain.startWith(() -> latest = new Calls(world))
                .withAction(4, new LayoutEveryRank())
                .withAction(2, new RefusedLayout())
                .withAction(4, new DispatchEveryRank())
                .withAction(2, new StaleDispatch())
                .withAction(3, new CombineEveryRank())
                .withAction(2, new StaleCombine())
                .withAction(1, new ReadStaleResult())
                .withAction(2, new LowLatencyCall())
                .withAction(1, new LowLatencyBadExpert())
                .withAction(1, new LowLatencyThirdDispatch())
                .withAction(1, new CloseMoeBuffer())
                .withAction(1, new CloseLowLatencyBuffer())
                .withAction(1, new CallsOnClosedBuffers())
                .withMaxTransformations(8);
    }

    /**
     * The buffers under test, the inputs the calls read, and the model: which handle and which dispatch of each rank
     * the calls must accept, and which ones they must refuse.
     */
    static final class Calls implements AutoCloseable {
        final LocalWorld world;
        /** This try's number: it picks the row path and the low-latency protocol, so every pair of them comes up. */
        final int tryNumber = TRIES.getAndIncrement();
        /** Tries alternate what moves the rows: the SMs, then the copy engines. */
        final MoeConfig config = MoeGpuTest.config(2048, ElementType.BF16, 4, 64,
                tryNumber % 2 == 0 ? MoeRowPath.SM : MoeRowPath.COPY_ENGINE);
        final MoeConfig llConfig = MoeLowLatencyGpuTest.config(ElementType.BF16, false, 4, 8);
        /** Every other pair of tries takes the tagged low-latency protocol, so both meet every kind of call sequence. */
        final LowLatencySizing.Protocol llProtocol = tryNumber / 2 % 2 == 0
                ? LowLatencySizing.Protocol.TAGGED : LowLatencySizing.Protocol.COUNTED;
        /**
         * Of those, every other pair runs a dispatch without the split as its two halves back to back, as past one
         * wave of send units (these calls are within one, where the default is one kernel): both forms meet every
         * kind of call sequence.
         */
        final String llOneKernel = tryNumber / 4 % 2 == 0 ? "auto" : "false";
        final MoeBuffer moe;
        final MoeInputs inputs;
        final MoeReferenceCheck check;
        final MoeRank heldRank0;
        final MoeBuffer ll;
        final MoeLowLatencyReferenceCheck llCheck;
        final MoeRank heldLlRank0;
        boolean moeClosed;
        boolean llClosed;
        /** Per rank: the handle of its latest layout when that layout succeeded, else null. */
        final MoeHandle[] handle = new MoeHandle[RANKS];
        /** Per rank: the input its latest successful layout saw. */
        final MoeReference.Input[] layoutInput = new MoeReference.Input[RANKS];
        /** Handles of rank 0 that a later layout (valid or refused) retired. */
        final List<MoeHandle> staleHandles = new ArrayList<>();
        /** Per rank: its latest dispatch, the input it sent, and the handle it was given. */
        final MoeDispatchResult[] dispatched = new MoeDispatchResult[RANKS];
        final MoeReference.Input[] dispatchedInput = new MoeReference.Input[RANKS];
        final MoeHandle[] dispatchHandle = new MoeHandle[RANKS];
        /** Dispatch results of rank 0 that a later dispatch retired, with the handles they were given. */
        final List<StaleResult> staleResults = new ArrayList<>();
        /** A low-latency dispatch of rank 0 that was consumed, for reads after the close; null before any. */
        MoeLowLatencyDispatch consumedLl;

        Calls(LocalWorld world) {
            this.world = world;
            MoeBuffer m = null;
            MoeInputs in = null;
            MoeReferenceCheck c = null;
            MoeBuffer l = null;
            MoeLowLatencyReferenceCheck lc = null;
            try {
                // Everything allocated here, before any kernel runs (an allocation waits for running kernels).
                m = MoeBuffer.create(world, config);
                in = new MoeInputs(m);
                c = new MoeReferenceCheck(m);
                l = createLowLatency();
                lc = new MoeLowLatencyReferenceCheck(l);
            } catch (RuntimeException e) {
                for (AutoCloseable a : new AutoCloseable[] {l, c, in, m}) {
                    closeQuietly(a, e);
                }
                throw e;
            }
            this.moe = m;
            this.inputs = in;
            this.check = c;
            this.ll = l;
            this.llCheck = lc;
            this.heldRank0 = m.rank(0);
            this.heldLlRank0 = l.rank(0);
        }

        /** A buffer of the low-latency part, under this try's protocol. */
        MoeBuffer createLowLatency() {
            MoeBuffer l = TestProperties.with(LowLatencySizing.PROTOCOL_PROP_NAME,
                    llProtocol.name().toLowerCase(Locale.ROOT), () -> TestProperties.with(
                            LowLatencyRank.ONE_KERNEL_DISPATCH_PROP_NAME, llOneKernel,
                            () -> MoeBuffer.create(world, llConfig)));
            assertEquals(llProtocol == LowLatencySizing.Protocol.TAGGED, l.lowLatency().sizing().tagged(),
                    llProtocol.name());
            return l;
        }

        /** Runs {@code step} within {@link #STEP_LIMIT}, then checks that it left no device error. */
        void step(String what, Runnable step) {
            within(what, step);
            world.checkErrors();
        }

        /**
         * Asserts that {@code call} is refused on the host with {@code type}, naming {@code words}, and ran nothing. The
         * ranks' streams are idle first: a valid layout leaves its exchange queued, which ends once every rank's is.
         */
        <T extends Throwable> void refused(Class<T> type, String words, Executable call) {
            for (int r = 0; r < RANKS; r++) {
                world.rank(r).stream().synchronize();
            }
            T e = assertThrows(type, call);
            assertTrue(e.getMessage().contains(words), "expected \"" + words + "\" in: " + e.getMessage());
            assertFalse(world.rank(0).device().kernelsMayBeRunning(), "a refused call left a kernel running");
        }

        void layout(int r, MoeRouting.Kind kind, int tokens, Random rnd) {
            MoeReference.Input in = inputs.upload(r, kind, tokens, rnd);
            MoeHandle h = moe.rank(r).layout(inputs.topk(r, tokens));
            MoeReference.Layout want = MoeReference.layout(in.topkIdx(), tokens, config.topK(), config.numExperts(),
                    RANKS, config.numChannels());
            assertTrue(Arrays.equals(want.tokensPerRank(), h.tokensPerRank()), "rank " + r + " tokens per rank");
            assertTrue(Arrays.equals(want.tokensPerExpert(), h.tokensPerExpert()), "rank " + r + " tokens per expert");
            retireLayout(r);
            handle[r] = h;
            layoutInput[r] = in;
        }

        /** The model's view of a layout on rank r that reached the GPU: the earlier handle is stale, valid or not. */
        void retireLayout(int r) {
            if (handle[r] != null && r == 0) {
                staleHandles.add(handle[r]);
            }
            handle[r] = null;
        }

        /** Whether rank r's latest dispatch was given the handle of rank r's latest layout (else combine refuses it). */
        boolean dispatchLayoutCurrent(int r) {
            return dispatched[r] != null && dispatchHandle[r] == handle[r];
        }

        boolean everyRankHasAHandle() {
            return !moeClosed && Arrays.stream(handle).allMatch(h -> h != null);
        }

        boolean everyRankCanCombine() {
            if (moeClosed) {
                return false;
            }
            for (int r = 0; r < RANKS; r++) {
                if (!dispatchLayoutCurrent(r)) {
                    return false;
                }
            }
            return true;
        }

        /** The checks that end a try: a valid step on every rank matches the reference, in a new buffer if closed. */
        void expectTheNextValidCallsToMatchTheReference() {
            step("the closing high-throughput check", () -> {
                if (moeClosed) {
                    try (MoeBuffer again = MoeBuffer.create(world, config); MoeReferenceCheck c = new MoeReferenceCheck(again)) {
                        c.run(MoeRouting.Kind.SKEWED, 1, new int[] {64, 17});
                    }
                } else {
                    check.run(MoeRouting.Kind.SKEWED, 1, new int[] {64, 17});
                }
            });
            step("the closing low-latency check", () -> {
                if (llClosed) {
                    try (MoeBuffer again = createLowLatency();
                         MoeLowLatencyReferenceCheck c = new MoeLowLatencyReferenceCheck(again)) {
                        c.run(MoeRouting.Kind.REPEATS, 2, new int[] {8, 3}, true);
                    }
                } else {
                    llCheck.run(MoeRouting.Kind.REPEATS, 2, new int[] {8, 3}, true);
                }
            });
        }

        @Override
        public void close() {
            RuntimeException first = null;
            for (AutoCloseable a : new AutoCloseable[] {ll, llCheck, moe, check, inputs}) {
                try {
                    a.close();
                } catch (Exception e) {
                    if (first == null) {
                        first = e instanceof RuntimeException re ? re : new IllegalStateException(e);
                    } else {
                        first.addSuppressed(e);
                    }
                }
            }
            if (first != null) {
                throw first;
            }
        }

        private static void closeQuietly(AutoCloseable a, RuntimeException cause) {
            if (a == null) {
                return;
            }
            try {
                a.close();
            } catch (Exception e) {
                cause.addSuppressed(e);
            }
        }

        @Override
        public String toString() {
            return "MoE calls, rows by " + config.rowPath() + (moeClosed ? ", buffer closed" : "") + (llClosed ? ", low-latency buffer closed" : "");
        }
    }

    /** A dispatch result a later dispatch of its rank retired, and the handle it was given. */
    record StaleResult(MoeDispatchResult result, MoeHandle handle) {
    }

    private static Transformer<Calls> mutate(String what, Consumer<Calls> step) {
        return Transformer.mutate(what, c -> c.step(what, () -> step.accept(c)));
    }

    private static int[] tokens(Random rnd, int max) {
        return new int[] {rnd.nextInt(max + 1), rnd.nextInt(max + 1)};
    }

    /** A valid layout on every rank. */
    static final class LayoutEveryRank implements Action.Independent<Calls> {
        @Override
        public boolean precondition(Calls c) {
            return !c.moeClosed;
        }

        @Override
        public Arbitrary<Transformer<Calls>> transformer() {
            return Combinators.combine(Arbitraries.of(MoeRouting.HIGH_THROUGHPUT), Arbitraries.longs()).as((kind, seed) ->
                    mutate("layout (" + kind + ") on every rank", c -> {
                        Random rnd = new Random(seed);
                        int[] t = tokens(rnd, c.config.maxTokensPerRank());
                        for (int r = 0; r < RANKS; r++) {
                            c.layout(r, kind, t[r], rnd);
                        }
                    }));
        }
    }

    /**
     * A layout on rank 0 refused: on the GPU for an expert index out of range (it retires rank 0's handle), or on the
     * host for its type or token count (it retires nothing); rank 1 then makes no layout either.
     */
    static final class RefusedLayout implements Action.Independent<Calls> {
        @Override
        public boolean precondition(Calls c) {
            return !c.moeClosed;
        }

        @Override
        public Arbitrary<Transformer<Calls>> transformer() {
            Arbitrary<Long> bad = Arbitraries.of(32L, 33L, -2L, 1L << 32, Long.MAX_VALUE, Long.MIN_VALUE);
            return Combinators.combine(Arbitraries.of("on the GPU", "on the host"), bad, Arbitraries.longs())
                    .as((where, value, seed) -> mutate("layout on rank 0 refused " + where
                    + (where.equals("on the GPU") ? " (expert " + value + ")" : ""), c -> {
                        Random rnd = new Random(seed);
                        MoeRank r0 = c.moe.rank(0);
                        if (where.equals("on the GPU")) {
                            int t = 1 + rnd.nextInt(c.config.maxTokensPerRank());
                            String entry = c.inputs.uploadBad(0, t, rnd.nextInt(t), rnd.nextInt(c.config.topK()), value,
                                    rnd);
                            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                                    () -> r0.layout(c.inputs.badTopk(0, t)));
                            assertTrue(e.getMessage().contains(entry + " is not an expert"), e.getMessage());
                            c.retireLayout(0);
                        } else {
                            DeviceTensor room = c.inputs.x(0, c.config.maxTokensPerRank());
                            c.refused(IllegalArgumentException.class, "maxTokensPerRank", () -> r0.layout(DeviceTensor.of(
                                    room.pointer(), room.capacityBytes(), ElementType.INT64,
                                    c.config.maxTokensPerRank() + 1, c.config.topK())));
                            c.refused(IllegalArgumentException.class, "topkIdx", () -> r0.layout(
                                    c.inputs.weights(0, 4)));
                        }
                    }));
        }
    }

    /** A dispatch on every rank with its current handle: its outputs match the reference. */
    static final class DispatchEveryRank implements Action.Independent<Calls> {
        @Override
        public boolean precondition(Calls c) {
            return c.everyRankHasAHandle();
        }

        @Override
        public Arbitrary<Transformer<Calls>> transformer() {
            return Arbitraries.just(mutate("dispatch on every rank", c -> {
                MoeDispatchResult[] d = c.inputs.dispatch(c.moe, c.handle, c.layoutInput);
                if (c.dispatched[0] != null) {
                    c.staleResults.add(new StaleResult(c.dispatched[0], c.dispatchHandle[0]));
                }
                for (int r = 0; r < RANKS; r++) {
                    c.dispatched[r] = d[r];
                    c.dispatchedInput[r] = c.layoutInput[r];
                    c.dispatchHandle[r] = c.handle[r];
                }
            }));
        }
    }

    /**
     * Rank 0's dispatch with a handle the model says is stale (the sequence when a refused layout retired it),
     * or with rank 1's: refused on the host, so the other rank does not dispatch either.
     */
    static final class StaleDispatch implements Action.Dependent<Calls> {
        @Override
        public boolean precondition(Calls c) {
            return !c.moeClosed && (!c.staleHandles.isEmpty() || c.handle[1] != null);
        }

        @Override
        public Arbitrary<Transformer<Calls>> transformer(Calls state) {
            List<MoeHandle> choices = new ArrayList<>(state.staleHandles);
            if (state.handle[1] != null) {
                choices.add(state.handle[1]);
            }
            return Arbitraries.of(choices).map(h -> {
                boolean foreign = h == state.handle[1];
                return mutate("dispatch on rank 0 with " + (foreign ? "rank 1's handle" : "a stale handle"), c -> {
                    int t = h.numTokens();
                    Class<? extends RuntimeException> type = foreign ? IllegalArgumentException.class
                            : IllegalStateException.class;
                    c.refused(type,
                            foreign ? "belongs to rank 1" : "run layout again on rank 0",
                            () -> c.moe.rank(0).dispatch(c.inputs.x(0, t), null, c.inputs.topk(0, t),
                                    c.inputs.weights(0, t), h));
                });
            });
        }
    }

    /** A combine on every rank of its current dispatch, with new expert outputs: the sums match the reference. */
    static final class CombineEveryRank implements Action.Independent<Calls> {
        @Override
        public boolean precondition(Calls c) {
            return c.everyRankCanCombine();
        }

        @Override
        public Arbitrary<Transformer<Calls>> transformer() {
            return Arbitraries.longs().map(seed -> mutate("combine on every rank",
                    c -> c.inputs.combine(c.moe, c.dispatched, c.dispatchedInput, new Random(seed))));
        }
    }

    /**
     * Rank 0's combine of a dispatch the model says is stale: an older one, or the latest after a layout retired its
     * handle. Refused on the host (for the layout when its handle is stale, else for the newer dispatch), so the other
     * rank does not combine.
     */
    static final class StaleCombine implements Action.Dependent<Calls> {
        @Override
        public boolean precondition(Calls c) {
            return !c.moeClosed && (!c.staleResults.isEmpty() || (c.dispatched[0] != null && !c.dispatchLayoutCurrent(0)));
        }

        @Override
        public Arbitrary<Transformer<Calls>> transformer(Calls state) {
            List<StaleResult> choices = new ArrayList<>(state.staleResults);
            if (state.dispatched[0] != null && !state.dispatchLayoutCurrent(0)) {
                choices.add(new StaleResult(state.dispatched[0], state.dispatchHandle[0]));
            }
            return Arbitraries.of(choices).map(d -> mutate("combine on rank 0 of a "
                    + (d.result() == state.dispatched[0] ? "dispatch whose layout is stale" : "stale dispatch"), c -> {
                        String words = d.handle() != c.handle[0] ? "this handle is stale" : "dispatched again since";
                        c.refused(IllegalStateException.class, words,
                                () -> c.moe.rank(0).combine(c.inputs.y(0), d.result()));
                    }));
        }
    }

    /** Every getter of a dispatch result of rank 0 that a later dispatch retired throws. */
    static final class ReadStaleResult implements Action.Dependent<Calls> {
        @Override
        public boolean precondition(Calls c) {
            return !c.moeClosed && !c.staleResults.isEmpty();
        }

        @Override
        public Arbitrary<Transformer<Calls>> transformer(Calls state) {
            return Arbitraries.of(state.staleResults).map(StaleResult::result).map(d -> mutate(
                    "read a stale dispatch result of rank 0", c -> {
                List<Executable> reads = List.of(d::recvX, d::recvScales, d::recvTopkIdx, d::recvTopkWeights,
                        d::recvSource, d::localExpertCountsTensor, d::numRecvTokens, d::localExpertCounts);
                for (Executable read : reads) {
                    c.refused(IllegalStateException.class, "dispatched again since", read);
                }
                assertDoesNotThrow(d::handle);
            }));
        }
    }

    /** A valid low-latency dispatch + combine on every rank, with or without the send/receive split. */
    static final class LowLatencyCall implements Action.Independent<Calls> {
        @Override
        public boolean precondition(Calls c) {
            return !c.llClosed;
        }

        @Override
        public Arbitrary<Transformer<Calls>> transformer() {
            return Combinators.combine(Arbitraries.of(MoeRouting.Kind.class), Arbitraries.of(false, true),
                    Arbitraries.longs()).as((kind, split, seed) -> mutate("low-latency dispatch + combine (" + kind
                    + (split ? ", split" : "") + ") on every rank", c -> {
                        int[] t = tokens(new Random(seed), c.llConfig.lowLatencyMaxTokensPerRank());
                        c.llCheck.run(kind, seed, t, split);
                    }));
        }
    }

    /**
     * A low-latency dispatch on every rank where rank 0's top-k names an expert out of range: the kernels treat it as
     * -1 and complete, checkRouting names it on rank 0, and every rank releases the call.
     */
    static final class LowLatencyBadExpert implements Action.Independent<Calls> {
        @Override
        public boolean precondition(Calls c) {
            return !c.llClosed;
        }

        @Override
        public Arbitrary<Transformer<Calls>> transformer() {
            return Combinators.combine(Arbitraries.of(32L, -5L, 1L << 33), Arbitraries.longs()).as((value, seed) ->
                    mutate("low-latency dispatch on every rank, rank 0's expert " + value + " out of range", c -> {
                        Random rnd = new Random(seed);
                        int[] t = {1 + rnd.nextInt(c.llConfig.lowLatencyMaxTokensPerRank()), rnd.nextInt(9)};
                        MoeLowLatencyReferenceCheck.Case k = c.llCheck.prepare(MoeRouting.Kind.UNIFORM, seed, t);
                        long[] idx = Arrays.stream(k.inputs()[0].topkIdx()).asLongStream().toArray();
                        int at = rnd.nextInt(idx.length);
                        idx[at] = value;
                        c.llCheck.overwriteTopk(0, idx);
                        MoeLowLatencyDispatch[] d = new MoeLowLatencyDispatch[RANKS];
                        for (int r = 0; r < RANKS; r++) {
                            d[r] = c.ll.rank(r).lowLatencyDispatch(c.llCheck.x(r, t[r]), c.llCheck.topkIdx(r, t[r]),
                                    false);
                        }
                        int k4 = c.llConfig.topK();
                        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, d[0]::checkRouting);
                        assertTrue(e.getMessage().contains("topkIdx[" + at / k4 + "][" + at % k4 + "]"), e.getMessage());
                        d[1].checkRouting();
                        for (int r = 0; r < RANKS; r++) {
                            d[r].release();
                        }
                        c.consumedLl = d[0];
                    }));
        }
    }

    /**
     * Two low-latency dispatches outstanding on every rank, a third on rank 0 refused before any kernel, then both
     * combined in order on every rank: the sums match the reference, and the first dispatch's rows are refused once
     * combined.
     */
    static final class LowLatencyThirdDispatch implements Action.Independent<Calls> {
        @Override
        public boolean precondition(Calls c) {
            return !c.llClosed;
        }

        @Override
        public Arbitrary<Transformer<Calls>> transformer() {
            return Arbitraries.longs().map(seed -> mutate("two low-latency dispatches on every rank, a third refused",
                    c -> {
                        int[] t = tokens(new Random(seed), c.llConfig.lowLatencyMaxTokensPerRank());
                        MoeLowLatencyReferenceCheck.Case k = c.llCheck.prepare(MoeRouting.Kind.SKEWED, seed, t);
                        MoeLowLatencyDispatch[][] d = new MoeLowLatencyDispatch[2][RANKS];
                        for (int call = 0; call < 2; call++) {
                            for (int r = 0; r < RANKS; r++) {
                                d[call][r] = c.ll.rank(r).lowLatencyDispatch(c.llCheck.x(r, t[r]), c.llCheck.topkIdx(r,
                                        t[r]),
                                        call == 1);
                            }
                        }
                        // Refused on the host while both dispatches may still run (so not through c.refused).
                        IllegalStateException third = assertThrows(IllegalStateException.class,
                                () -> c.ll.rank(0).lowLatencyDispatch(c.llCheck.x(0, t[0]), c.llCheck.topkIdx(0, t[0]),
                                        false));
                        assertTrue(third.getMessage().contains("at most two dispatches may be outstanding"),
                                third.getMessage());
                        for (int r = 0; r < RANKS; r++) {
                            d[1][r].receive();
                        }
                        DeviceTensor[][] out = new DeviceTensor[2][RANKS];
                        for (int call = 0; call < 2; call++) {
                            for (int r = 0; r < RANKS; r++) {
                                out[call][r] = c.ll.rank(r).lowLatencyCombine(c.llCheck.y(r), c.llCheck.topkIdx(r,
                                        t[r]),
                                        c.llCheck.topkWeights(r, t[r]), d[call][r], false).output();
                            }
                        }
                        IllegalStateException e = assertThrows(IllegalStateException.class, d[0][0]::recvX);
                        assertTrue(e.getMessage().contains("which was combined or released"), e.getMessage());
                        c.llCheck.expectCombine(k, out[0], 0);
                        c.llCheck.expectCombine(k, out[1], 0);
                        c.consumedLl = d[0][0];
                    }));
        }
    }

    /** Closes the high-throughput buffer: the calls through it, and through what was taken from it, are refused. */
    static final class CloseMoeBuffer implements Action.Independent<Calls> {
        @Override
        public boolean precondition(Calls c) {
            return !c.moeClosed;
        }

        @Override
        public Arbitrary<Transformer<Calls>> transformer() {
            return Arbitraries.just(mutate("close the MoeBuffer", c -> {
                long free = c.world.heap().freeBytes();
                c.moe.close();
                c.moeClosed = true;
                assertEquals(free + c.moe.heapRegion().sizeBytes(), c.world.heap().freeBytes(), "the region came back");
                closedCalls(c);
            }));
        }
    }

    /** Closes the low-latency buffer: the calls through it are refused. */
    static final class CloseLowLatencyBuffer implements Action.Independent<Calls> {
        @Override
        public boolean precondition(Calls c) {
            return !c.llClosed;
        }

        @Override
        public Arbitrary<Transformer<Calls>> transformer() {
            return Arbitraries.just(mutate("close the low-latency MoeBuffer", c -> {
                long free = c.world.heap().freeBytes();
                c.ll.close();
                c.llClosed = true;
                assertEquals(free + c.ll.lowLatency().heapRegion().sizeBytes(), c.world.heap()
                        .freeBytes(), "the region came back");
                closedCalls(c);
            }));
        }
    }

    /** Calls on whichever buffer is closed, again. */
    static final class CallsOnClosedBuffers implements Action.Independent<Calls> {
        @Override
        public boolean precondition(Calls c) {
            return c.moeClosed || c.llClosed;
        }

        @Override
        public Arbitrary<Transformer<Calls>> transformer() {
            return Arbitraries.just(mutate("calls on a closed buffer", MoeCallSequencePropertyTest::closedCalls));
        }
    }

    /** Every call on a closed buffer, through it and through what was taken from it before, is refused by name. */
    private static void closedCalls(Calls c) {
        if (c.moeClosed) {
            c.refused(IllegalStateException.class, "closed", () -> c.moe.rank(0));
            c.refused(IllegalStateException.class, "closed", () -> c.heldRank0.layout(c.inputs.topk(0, 1)));
            c.refused(IllegalStateException.class, "closed", () -> c.heldRank0.waitNanos(1));
            for (MoeDispatchResult d : new MoeDispatchResult[] {c.dispatched[0], c.staleResults.isEmpty() ? null
                    : c.staleResults.get(0).result()}) {
                if (d != null) {
                    c.refused(IllegalStateException.class, "closed", d::numRecvTokens);
                    c.refused(IllegalStateException.class, "closed", d::recvX);
                    c.refused(IllegalStateException.class, "closed", () -> c.heldRank0.combine(c.inputs.y(0), d));
                }
            }
            for (MoeHandle h : new MoeHandle[] {c.handle[0], c.staleHandles.isEmpty() ? null : c.staleHandles.get(0)}) {
                if (h != null) {
                    c.refused(IllegalStateException.class, "closed", () -> c.heldRank0.dispatch(
                            c.inputs.x(0, h.numTokens()), null, c.inputs.topk(0, h.numTokens()),
                            c.inputs.weights(0, h.numTokens()), h));
                }
            }
        }
        if (c.llClosed) {
            c.refused(IllegalStateException.class, "closed", () -> c.ll.rank(0));
            c.refused(IllegalStateException.class, "closed", () -> c.heldLlRank0.lowLatencyDispatch(c.llCheck.x(0, 1),
                    c.llCheck.topkIdx(0, 1), false));
            if (c.consumedLl != null) {
                MoeLowLatencyDispatch d = c.consumedLl;
                c.refused(IllegalStateException.class, "closed", d::recvX);
                c.refused(IllegalStateException.class, "closed", d::release);
            }
        }
    }
}
