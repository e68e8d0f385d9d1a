package io.gda4j.moe;

import io.gda4j.moe.check.MoeReference;
import io.gda4j.moe.check.MoeReferenceCheck;
import io.gda4j.moe.check.MoeRouting;
import io.gda4j.moe.tensor.DeviceTensor;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.world.DeviceErrorException;
import io.gda4j.world.LocalWorld;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The combine that pulls the expert outputs from every rank's {@link MoeRank#combineInput()} (direct worlds): the
 * same sums as the push combine, bit for bit, in every routing, after pushes on the same buffer and replayed in graphs;
 * a world where one rank pulls and another pushes fails on every rank with a message, never hangs; a y that only
 * overlaps the combine input is refused on the host.
 */
@Tag("gpu")
@Timeout(300)
class MoePullCombineGpuTest {
    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {2, 4})
    void pullAndPushGiveTheReferenceSumsInTurn(int ranks) {
        try (LocalWorld w = MoeGpuTest.world(ranks, "p2p", Duration.ofSeconds(20));
             MoeBuffer moe = MoeBuffer.create(w, MoeGpuTest.config(4096, ElementType.FP8_E4M3, 8, 96));
             MoeReferenceCheck pull = new MoeReferenceCheck(moe, true);
             MoeReferenceCheck push = new MoeReferenceCheck(moe, false)) {
            assertTrue(pull.pullsCombine(), "a p2p world combines from the heap when asked");
            Random rnd = new Random(ranks);
            for (MoeRouting.Kind kind : MoeRouting.HIGH_THROUGHPUT) {
                int[] tokens = MoeRouting.tokenCounts(ranks, 96, rnd);
                long seed = rnd.nextLong();
                long pulled = pull.run(kind, seed, tokens);
                // The same call pushed: the same received rows and combined sums, so the same hash.
                assertEquals(pulled, push.run(kind, seed, tokens), kind + ": pull and push differ");
            }
        }
    }

    /** The DeepEP shape: 4096 tokens of hidden 7168, top-8 of 256, BF16, 2 ranks. */
    @Test
    void deepEpShapeAtFullTokens() {
        MoeConfig c = MoeConfig.deepEpBuilder().dtype(ElementType.BF16).numChannels(8).build();
        try (LocalWorld w = MoeGpuTest.world(2, "p2p", Duration.ofSeconds(30), c.sizing(2, true).heapBytes() + (16L << 20));
             MoeBuffer moe = MoeBuffer.create(w, c);
             MoeReferenceCheck check = new MoeReferenceCheck(moe, true)) {
            check.run(MoeRouting.Kind.UNIFORM, 7, new int[] {4096, 4096});
            check.run(MoeRouting.Kind.SKEWED, 8, new int[] {4096, 1000});
        }
    }

    @Test
    @Timeout(600)
    void aCapturedPullCombineReplaysWithNewExpertOutputs() {
        try (LocalWorld w = MoeGpuTest.world(2, "p2p", Duration.ofSeconds(20));
             MoeBuffer moe = MoeBuffer.create(w, MoeGpuTest.config(2048, ElementType.BF16, 8, 64));
             MoeReferenceCheck check = new MoeReferenceCheck(moe, true)) {
            MoeGraphReplay.runCaptured(check, MoeRouting.Kind.SKEWED, 11, new int[] {64, 23}, 50);
            check.run(MoeRouting.Kind.UNIFORM, 12, new int[] {40, 64});
        }
    }

    /** Rank 0 pulls, rank 1 pushes: both combines stop with the error that names the rule, within the wait timeout. */
    @Test
    void ranksThatDisagreeOnTheCombineInputFailWithAMessage() {
        try (LocalWorld w = MoeGpuTest.world(2, "p2p", Duration.ofSeconds(5));
             MoeBuffer moe = MoeBuffer.create(w, MoeGpuTest.config(2048, ElementType.BF16, 4, 64));
             MoeInputs inputs = new MoeInputs(moe)) {
            Random rnd = new Random(3);
            int[] tokens = {48, 64};
            MoeReference.Input[] in = new MoeReference.Input[2];
            MoeHandle[] handles = new MoeHandle[2];
            for (int r = 0; r < 2; r++) {
                in[r] = inputs.upload(r, MoeRouting.Kind.UNIFORM, tokens[r], rnd);
                handles[r] = moe.rank(r).layout(inputs.topk(r, tokens[r]));
            }
            MoeDispatchResult[] d = inputs.dispatch(moe, handles, in);
            moe.rank(0).combine(moe.rank(0).combineInput(), d[0]);
            moe.rank(1).combine(inputs.y(1), d[1]);
            for (int r = 0; r < 2; r++) {
                moe.rank(r).stream().synchronize();
            }
            DeviceErrorException e = assertThrows(DeviceErrorException.class, moe::checkErrors);
            assertTrue(e.getMessage().contains("MoeRank.combineInput()")
                    && e.getMessage().contains("Every rank of a combine must do the same"), e.getMessage());
        }
    }

    @Test
    void aYThatOverlapsTheCombineInputElsewhereIsRefused() {
        try (LocalWorld w = MoeGpuTest.world(2, "p2p", Duration.ofSeconds(5));
             MoeBuffer moe = MoeBuffer.create(w, MoeGpuTest.config(2048, ElementType.BF16, 4, 64));
             MoeInputs inputs = new MoeInputs(moe)) {
            Random rnd = new Random(4);
            MoeReference.Input[] in = new MoeReference.Input[2];
            MoeHandle[] handles = new MoeHandle[2];
            int[] tokens = {48, 64};
            for (int r = 0; r < 2; r++) {
                in[r] = inputs.upload(r, MoeRouting.Kind.UNIFORM, tokens[r], rnd);
                handles[r] = moe.rank(r).layout(inputs.topk(r, tokens[r]));
            }
            MoeDispatchResult[] d = inputs.dispatch(moe, handles, in);
            DeviceTensor input = moe.rank(0).combineInput();
            // Two rows in: as many rows as the dispatch received still fit (the row count is checked first).
            DeviceTensor shifted = DeviceTensor.of(input.pointer().plusBytes(2L * 2 * 2048), input.capacityBytes() - 8192,
                    ElementType.BF16, d[0].numRecvTokens(), 2048);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> moe.rank(0).combine(shifted, d[0]));
            assertTrue(e.getMessage().contains("overlaps combineInput()"), e.getMessage());
        }
    }
}
