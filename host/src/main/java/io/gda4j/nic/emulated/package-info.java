/**
 * The emulated NIC: a software model of an mlx5 NIC for machines that have none (see docs/ARCHITECTURE.md).
 *
 * <p>Same rings and bytes as the real NIC ({@code io.gda4j.mlx5} layouts) in pinned host memory mapped into the GPU;
 * an {@link io.gda4j.nic.emulated.EmulatedEngine} thread polls each QP's doorbell record, decodes the new WQEs with
 * {@link io.gda4j.mlx5.WqeDecoder}, checks them against the {@link io.gda4j.nic.emulated.RegistrationTable} and
 * hands them, in order, to the QP's {@link io.gda4j.nic.emulated.QpExecutor} (a CUDA stream: copies for
 * WRITE/inline/READ, a small kernel for atomics, an 8-byte stream write for each CQE). Faults become error CQEs with
 * mlx5's syndromes; the {@link io.gda4j.nic.emulated.EmulatedPlatform} seam lets CPU tests run the whole engine on
 * host memory. Every figure measured through it is labelled "emulated NIC": it is a test instrument, not a network.
 *
 * <p>Internal: chosen with {@code GDA4J_NIC=emulated} and tuned with the {@code GDA4J_EMULATED_NIC_*} settings.
 */
package io.gda4j.nic.emulated;
