package io.gda4j.moe;

import io.gda4j.moe.check.MoeLowLatencyReferenceCheck;
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
 * The low-latency combine that reads the expert outputs from each call's
 * {@link MoeLowLatencyDispatch#combineInput()} (direct worlds): the reference sums, bit for bit, in every routing,
 * taking turns with the pushing combine on the same buffers; ranks that disagree fail on every rank with a message,
 * never hang; a y that only overlaps a combine input is refused on the host; under the default protocol, the tagged
 * one (MoeLowLatencyCountedPullCombineGpuTest: the counted one, asked for). (Graph replays: MoeLowLatencyGpuTest;
 * the proxy module's MoeLowLatencyProxyGpuTest passes the combine input in a staged world, where the rows are put
 * from it.)
 */
@Tag("gpu")
@Timeout(300)
class MoeLowLatencyPullCombineGpuTest {
    @ParameterizedTest(name = "{0} ranks")
    @ValueSource(ints = {2, 4})
    void pullAndPushGiveTheReferenceInTurn(int ranks) {
        try (LocalWorld w = MoeGpuTest.world(ranks, "p2p", Duration.ofSeconds(20));
             MoeBuffer ll = MoeBuffer.create(w,
                     MoeLowLatencyGpuTest.config(ElementType.FP8_E4M3, false, 8, 48));
             MoeLowLatencyReferenceCheck pull = new MoeLowLatencyReferenceCheck(ll, true);
             MoeLowLatencyReferenceCheck push = new MoeLowLatencyReferenceCheck(ll, false)) {
            Random rnd = new Random(ranks);
            for (MoeRouting.Kind kind : MoeRouting.Kind.values()) {
                int[] tokens = MoeRouting.tokenCounts(ranks, 48, rnd);
                long seed = rnd.nextLong();
                boolean split = kind.ordinal() % 2 == 0;
                long pulled = pull.run(kind, seed, tokens, split);
                // The same call pushed (on the other buffer): the same rows and sums, so the same hash.
                assertEquals(pulled, push.run(kind, seed, tokens, !split), kind + ": pull and push differ");
            }
        }
    }

    /** Rank 0 pulls, rank 1 pushes: both combines stop with the error that names the rule, within the wait timeout. */
    @Test
    void ranksThatDisagreeOnTheCombineInputFailWithAMessage() {
        try (LocalWorld w = MoeGpuTest.world(2, "p2p", Duration.ofSeconds(5));
             MoeBuffer ll = MoeBuffer.create(w,
                     MoeLowLatencyGpuTest.config(ElementType.BF16, false, 4, 16));
             MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll, false)) {
            int[] tokens = {16, 11};
            check.prepare(MoeRouting.Kind.UNIFORM, 3, tokens);
            MoeLowLatencyDispatch[] d = new MoeLowLatencyDispatch[2];
            for (int r = 0; r < 2; r++) {
                d[r] = ll.rank(r).lowLatencyDispatch(check.x(r, tokens[r]), check.topkIdx(r, tokens[r]), false);
            }
            for (int r = 0; r < 2; r++) {
                DeviceTensor y = r == 0 ? d[r].combineInput() : check.y(r);
                ll.rank(r).lowLatencyCombine(y, check.topkIdx(r, tokens[r]), check.topkWeights(r, tokens[r]), d[r],
                        false);
            }
            for (int r = 0; r < 2; r++) {
                ll.rank(r).stream().synchronize();
            }
            DeviceErrorException e = assertThrows(DeviceErrorException.class, ll::checkErrors);
            assertTrue(e.getMessage().contains("MoeLowLatencyDispatch.combineInput()")
                    && e.getMessage().contains("Every rank of a combine must do the same"), e.getMessage());
        }
    }

    @Test
    void aYThatOverlapsACombineInputElsewhereIsRefused() {
        try (LocalWorld w = MoeGpuTest.world(2, "p2p", Duration.ofSeconds(5));
             MoeBuffer ll = MoeBuffer.create(w,
                     MoeLowLatencyGpuTest.config(ElementType.BF16, false, 4, 16));
             MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll, false)) {
            int[] tokens = {16, 11};
            check.prepare(MoeRouting.Kind.UNIFORM, 4, tokens);
            MoeLowLatencyDispatch[] d = new MoeLowLatencyDispatch[2];
            for (int r = 0; r < 2; r++) {
                d[r] = ll.rank(r).lowLatencyDispatch(check.x(r, tokens[r]), check.topkIdx(r, tokens[r]), false);
            }
            DeviceTensor input = d[0].combineInput();
            // One row in, the same shape (it runs one row into what follows; the call is refused before any kernel).
            DeviceTensor shifted = DeviceTensor.of(input.pointer().plusBytes(2L * 2048), input.capacityBytes(),
                    ElementType.BF16, input.dim(0), input.dim(1), input.dim(2));
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ll.rank(0)
                    .lowLatencyCombine(shifted,
                    check.topkIdx(0, tokens[0]), check.topkWeights(0, tokens[0]), d[0], false));
            assertTrue(e.getMessage().contains("overlaps the combine input"), e.getMessage());
            // The refused call left the dispatch to combine: both ranks still combine it (pushing).
            for (int r = 0; r < 2; r++) {
                ll.rank(r).lowLatencyCombine(check.y(r), check.topkIdx(r, tokens[r]), check.topkWeights(r, tokens[r]),
                        d[r],
                        false);
            }
            for (int r = 0; r < 2; r++) {
                ll.rank(r).stream().synchronize();
            }
            ll.checkErrors();
        }
    }
}
