package io.gda4j.moe;

import io.gda4j.moe.ll.LowLatencySizing;
import io.gda4j.moe.tensor.ElementType;

/**
 * Every test of {@link MoeLowLatencyGpuTest} over p2p under the tagged protocol ({@code gda4j/moe/ll_tagged.cuh}):
 * every routing case, BF16 and FP8, 2 and 4 ranks on one GPU, with and without the split, 1..512 tokens of DeepEP's
 * row shape, many experts and tokens, hidden 384, graph replays, two outstanding dispatches, 100 repetitions, bad
 * input, and the timeouts that name the missing rank in the dispatch and in the combine. Left out: the counted
 * protocol's row gathering and the ibgda worlds, which run the counted protocol whatever was asked for.
 */
class MoeLowLatencyTaggedGpuTest extends MoeLowLatencyGpuTest {
    @Override
    LowLatencySizing.Protocol protocol() {
        return LowLatencySizing.Protocol.TAGGED;
    }

    /** The counted protocol's token stage: not a test here (the tagged protocol always sends a row per rank). */
    @Override
    void gatheredAndPerExpertRowsBothMatchTheReference(boolean gather, int ranks) {
    }

    /** An ibgda world stages its rows: it runs the counted protocol, tested by the class this one extends. */
    @Override
    void ibgdaMatchesTheReference(ElementType type, int ranks) {
    }
}
