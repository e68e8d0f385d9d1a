package io.gda4j.moe;

import io.gda4j.moe.ll.LowLatencySizing;
import io.gda4j.moe.tensor.ElementType;

/**
 * Every test of {@link MoeLowLatencyGpuTest} over p2p under the counted protocol, asked for with
 * {@code -Dgda4j.moe.lowLatencyProtocol=counted}: every routing case, BF16 and FP8, 2 and 4 ranks on one GPU, with and
 * without the split, 1..512 tokens of DeepEP's row shape (the route kernel past one wave), many experts and tokens,
 * hidden 384, graph replays, two outstanding dispatches, 100 repetitions, bad input, and the timeouts that name the
 * missing rank in the dispatch and in the combine. Left out, as the class this one extends runs them already: the
 * counted protocol's row gathering (asked for there), the ibgda worlds (counted whatever is asked), and the tagged
 * dispatch's two forms.
 */
class MoeLowLatencyCountedGpuTest extends MoeLowLatencyGpuTest {
    @Override
    LowLatencySizing.Protocol protocol() {
        return LowLatencySizing.Protocol.COUNTED;
    }

    /** Run under the counted protocol by the class this one extends. */
    @Override
    void gatheredAndPerExpertRowsBothMatchTheReference(boolean gather, int ranks) {
    }

    /** An ibgda world stages its rows: it runs the counted protocol in the class this one extends. */
    @Override
    void ibgdaMatchesTheReference(ElementType type, int ranks) {
    }

    /** A tagged dispatch's forms: not this protocol's. */
    @Override
    void theTaggedDispatchInOneKernelAndInTwo(boolean oneKernel, int tokens, int ranks) {
    }
}
