/**
 * The benchmark rigs behind {@code gda4j moe}: they time the library's MoE calls (io.gda4j.moe) and compare them with
 * NCCL; the library itself neither times nor compares. {@link io.gda4j.samples.moe.MoeTimingRig} (high throughput) and
 * {@link io.gda4j.samples.moe.MoeLowLatencyTimingRig} (low latency) say what a timed step queues;
 * {@link io.gda4j.samples.moe.GatedSteps}, which both use, queues it on every rank behind a
 * {@link io.gda4j.samples.moe.LaunchGate} (and, across processes, a start line on the GPUs) so the CUDA events time the
 * GPU's work and not the host's launches, and takes each span's slowest rank over every process;
 * {@link io.gda4j.samples.moe.MoeNcclBaseline} and {@link io.gda4j.samples.moe.MoeLowLatencyNcclBaseline} say which
 * rows NCCL's all-to-all-v of the same routing moves in each mode ({@code io.gda4j.samples.nccl}), and
 * {@link io.gda4j.samples.moe.NcclExchangeRig} times it the same way; {@link io.gda4j.samples.moe.RankGpus} says which
 * ranks share a GPU, for the link columns and for NCCL, which refuses them. Checking outputs against the Java
 * references ({@code --check}) is the library's io.gda4j.moe.check, which the library's tests use too.
 *
 * <p>Internal: gda4j-samples is an application and exports nothing.
 */
package io.gda4j.samples.moe;
