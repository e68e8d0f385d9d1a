/**
 * Expert-parallel MoE all-to-all in DeepEP's shape, behind one door: {@link io.gda4j.moe.MoeBuffer} (sized once from
 * a {@link io.gda4j.moe.MoeConfig}, in the symmetric heap) and per rank a {@link io.gda4j.moe.MoeRank} with both
 * modes' calls, as DeepEP's one {@code Buffer}: for training and prefill (large batches, high throughput)
 * {@link io.gda4j.moe.MoeRank#layout}, {@link io.gda4j.moe.MoeRank#dispatch} and {@link io.gda4j.moe.MoeRank#combine};
 * for decoding (low latency) {@link io.gda4j.moe.MoeRank#lowLatencyDispatch} and
 * {@link io.gda4j.moe.MoeRank#lowLatencyCombine}. The config says which modes a buffer serves: a high-throughput
 * part, a low-latency part, or both.
 *
 * <h2>The packages</h2>
 * This package is the door: the buffer, the config, the rank, the calls' results and handles, and the timeout
 * exception. The tensors the calls take and return, and their number formats, are in {@link io.gda4j.moe.tensor}.
 * The protocols live below, one package each, and nobody but the door calls them: {@link io.gda4j.moe.ht} (high
 * throughput: rings, and direct stores where every pair of ranks is p2p or self) and {@link io.gda4j.moe.ll} (low
 * latency), both built on {@link io.gda4j.moe.core} (the shape, exact sizes, a rank's memory, the ranks of a part).
 * {@link io.gda4j.moe.check} holds the Java references and the checks that run a buffer's calls against them, which
 * the tests and {@code gda4j moe --check} share.
 *
 * <h2>High throughput</h2>
 * A rank's tokens are split into {@code numChannels} channels of two thread blocks each; dispatch sends each token
 * once to each rank that holds one of its experts, and the receiver's output is sorted by source rank, then token;
 * combine returns the rows and the source sums a token's rows in increasing rank order, bitwise identical whatever
 * the timing. Where every pair of ranks is p2p or self each row is stored once, straight into its place at the peer;
 * otherwise the rows go through rings with credits. {@link io.gda4j.moe.ht} describes both protocols.
 *
 * <h2>Input checks</h2>
 * Shapes, element types and buffer sizes are checked on the host before anything is launched. Expert indices are
 * checked by the layout kernel on the GPU: {@code layout} waits for it and throws on an index outside
 * {@code [-1, numExperts)} before any dispatch kernel can run (a dispatch takes the handle a layout returned). That
 * wait is the one host synchronisation of a step; dispatch and combine are queued on the rank's stream without one,
 * and reading the received counts ({@link io.gda4j.moe.MoeDispatchResult#numRecvTokens()}) is an explicit
 * synchronisation. With {@link io.gda4j.moe.MoeConfig#communicationStream()} the calls run on a communication
 * stream per rank instead, ordered with the rank's stream by events ({@link io.gda4j.moe.MoeRank} says how).
 *
 * <h2>Low latency (decoding)</h2>
 * The low-latency part sends each token once to each distinct expert of its top-k into an expert-major buffer, BF16
 * or FP8 cast on the fly, with no host synchronisation and two alternating buffers; each call can be split into a
 * send and a receive half. {@link io.gda4j.moe.ll} describes the protocol. A buffer whose config has both parts makes
 * both modes' calls on one {@link io.gda4j.moe.MoeRank}, each part in heap of its own.
 *
 * <h2>References</h2>
 * {@link io.gda4j.moe.check.MoeReference} and {@link io.gda4j.moe.check.MoeLowLatencyReference} compute every output
 * in Java, in the kernels' order; {@link io.gda4j.moe.check.MoeRouting} generates the cases they are fed;
 * {@link io.gda4j.moe.check.MoeReferenceCheck} and {@link io.gda4j.moe.check.MoeLowLatencyReferenceCheck} run a
 * buffer's calls on the GPU and compare them with the references bit for bit. They are public for the tests and for
 * {@code gda4j moe --check}; timing the calls and NCCL's all-to-all-v beside them is the samples' business
 * (io.gda4j.samples.moe), not the library's.
 */
package io.gda4j.moe;
