package io.gda4j.moe;

import io.gda4j.world.DeviceErrorDecoder;
import io.gda4j.world.ErrorRecord;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;

/**
 * Words the MoE kernels' device error record ({@code ERROR_COMBINE_INPUT_MIXED} of
 * {@code gda4j/moe/params_header.cuh}): ranks that disagree on where a combine reads its expert outputs. Registered
 * in {@code META-INF/services/io.gda4j.world.DeviceErrorDecoder}.
 */
public final class MoeErrorDecoder implements DeviceErrorDecoder {
    /** One rank combines from its heap's combine input and another from a tensor of its own, which cannot mix
     * (expected = this rank's entry word, seen = the peer's: {@code seq << 1 | fromHeap}). */
    public static final int COMBINE_INPUT_MIXED = 17;

    /** For {@link java.util.ServiceLoader}, which finds it through {@code DeviceErrorDecoder}. */
    public MoeErrorDecoder() {
    }

    @Override
    public Map<Integer, String> codes() {
        return Map.of(COMBINE_INPUT_MIXED, "COMBINE_INPUT_MIXED");
    }

    @Override
    public String describe(ErrorRecord r, String where, Duration waitTimeout) {
        return String.format(Locale.ROOT,
                "%s: this rank's combine %d read its expert outputs from %s, rank %d's from %s. Every rank of"
                        + " a combine must do the same: pass its combine input as y on every rank"
                        + " (MoeRank.combineInput(), or MoeLowLatencyDispatch.combineInput() in low-latency"
                        + " mode: the rows are pulled from the peers' heaps) or a tensor of its own on every"
                        + " rank (the rows are pushed); nothing was combined.",
                where, r.expected() >>> 1, heapOrOwn(r.expected()), r.peer(), heapOrOwn(r.seen()));
    }

    private static String heapOrOwn(long entryWord) {
        return (entryWord & 1) != 0 ? "its heap's combine input" : "a tensor of its own";
    }
}
