/**
 * What both MoE protocols (io.gda4j.moe.ht, io.gda4j.moe.ll) build their part of a buffer from, written once: the
 * shape every part is sized for and its checks ({@link io.gda4j.moe.core.MoeShape}), exact size arithmetic that
 * names what overflowed ({@link io.gda4j.moe.core.ExactSizes}), the header both parameter blocks begin with
 * ({@link io.gda4j.moe.core.MoeParamsHeaderDescriptor}), a rank's device memory and host reads
 * ({@link io.gda4j.moe.core.MoeRankMemory}), the ranks of a part and their heap region
 * ({@link io.gda4j.moe.core.MoeRankSet}), the hardware work queues the kernels need
 * ({@link io.gda4j.moe.core.WorkQueueBudget}), and a timed-out wait in a part's words
 * ({@link io.gda4j.moe.core.TimedOutWait}). A program calls io.gda4j.moe; this package is exported with it because
 * the door's parts and sizes (io.gda4j.moe.ht, io.gda4j.moe.ll) are built on its types.
 */
package io.gda4j.moe.core;
