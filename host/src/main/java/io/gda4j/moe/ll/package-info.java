/**
 * The low-latency (decoding) protocol of io.gda4j.moe, which {@link io.gda4j.moe.MoeBuffer} and
 * {@link io.gda4j.moe.MoeRank} call: the config's part ({@link io.gda4j.moe.ll.LowLatencyPart}), its sizes and heap
 * layout ({@link io.gda4j.moe.ll.LowLatencySizing}), the part of a buffer ({@link io.gda4j.moe.ll.LowLatencyBuffer}),
 * a rank's calls ({@link io.gda4j.moe.ll.LowLatencyRank}) and the two buffers they alternate between
 * ({@link io.gda4j.moe.ll.AlternatingBuffers}), and the parameter block the kernels take by value
 * ({@link io.gda4j.moe.ll.MoeLowLatencyParamsDescriptor}). The kernels are {@code kernels/moe_ll.cu}.
 *
 * <h2>The protocol</h2>
 * The low-latency part ({@link io.gda4j.moe.MoeConfig.Builder#lowLatency(int, io.gda4j.moe.tensor.ElementType)})
 * sends each token once to each distinct expert of its top-k into an expert-major buffer, BF16 or FP8 cast on the fly
 * ({@link io.gda4j.moe.tensor.Fp8BlockQuantizer}), with no host synchronisation and two alternating buffers; the
 * layout and the combine order are {@link io.gda4j.moe.check.MoeLowLatencyReference}'s. Each call can be split into a
 * send and a receive half. The combine reads the expert outputs where they are when they were written to
 * {@link io.gda4j.moe.MoeLowLatencyDispatch#combineInput()} and every pair of ranks is direct; otherwise the experts'
 * ranks return the rows first.
 *
 * <p>Two protocols ({@link io.gda4j.moe.ll.LowLatencySizing.Protocol}). Where every pair of ranks is direct (p2p,
 * self) the tagged one runs by default ({@code gda4j/moe/ll_tagged.cuh}): it carries the call's tag beside every 4
 * bytes it moves, so the receiver takes each word as it lands and no sender fences or counts after its rows; no route
 * kernel runs, an unsplit dispatch is one kernel while one wave of blocks holds its sends (else its two halves), and
 * the combine sets one flag per rank. The counted one (a count per expert and source after the rows; asked for, or
 * wherever a pair is proxy or ibgda) runs each unsplit call as one kernel (where one wave of blocks holds a block per
 * token, the dispatch's blocks route their own tokens; beyond, a route kernel goes first). Over the proxy, where each
 * put costs the proxy thread a driver call, a pair of ranks is batched: one put of all the rows one rank sends
 * another, one of the count table with the pair's signal, and one put of the combine's rows back. A buffer whose
 * config has both parts makes both modes' calls on one {@link io.gda4j.moe.MoeRank}, each part in heap of its own.
 */
package io.gda4j.moe.ll;
