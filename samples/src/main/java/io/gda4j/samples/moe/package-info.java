/**
 * The benchmark rigs behind {@code gda4j moe}: they time the library's MoE calls (io.gda4j.moe) and compare them
 * with NCCL; the library itself neither times nor compares. {@link io.gda4j.samples.moe.MoeTimingRig} and
 * {@link io.gda4j.samples.moe.MoeLowLatencyTimingRig} queue each timed step on every rank behind a
 * {@link io.gda4j.samples.moe.LaunchGate} (and, across processes, a start line on the GPUs) so the CUDA events time
 * the GPU's work and not the host's launches; {@link io.gda4j.samples.moe.MoeNcclBaseline} and
 * {@link io.gda4j.samples.moe.MoeLowLatencyNcclBaseline} time NCCL's all-to-all-v of the same routing
 * ({@link io.gda4j.samples.nccl}) on the same gate; {@link io.gda4j.samples.moe.RankGpus} says which ranks share a
 * GPU, for the link columns and for NCCL, which refuses them. Checking outputs against the Java references
 * ({@code --check}) is the library's MoeReferenceCheck, which the library's tests use too.
 */
package io.gda4j.samples.moe;
