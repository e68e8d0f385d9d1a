/**
 * What the MoE kernels must produce, in Java, and the checks that hold a {@link io.gda4j.moe.MoeBuffer} to it: the
 * references of both modes ({@link io.gda4j.moe.check.MoeReference}: layout, dispatch and combine of the
 * high-throughput mode; {@link io.gda4j.moe.check.MoeLowLatencyReference}: the low-latency dispatch and its weighted
 * combine), the routings and rows they are fed ({@link io.gda4j.moe.check.MoeRouting}: the cases the tests name), and
 * the checks that run a buffer's calls on the GPU with those inputs and compare every output bit for bit
 * ({@link io.gda4j.moe.check.MoeReferenceCheck}, {@link io.gda4j.moe.check.MoeLowLatencyReferenceCheck}). The
 * library's tests and {@code gda4j moe --check} share them; they time nothing (the samples' rigs do).
 */
package io.gda4j.moe.check;
