/**
 * Host set-up of RDMA resources through rdma-core: JNA direct-mapped bindings ({@link io.gda4j.verbs.LibIbverbs},
 * {@link io.gda4j.verbs.LibMlx5}), struct layouts as {@code *Descriptor} classes checked against
 * {@code <infiniband/verbs.h>} and {@code <infiniband/mlx5dv.h>} by a test, and small owning
 * {@link java.lang.AutoCloseable} resources ({@link io.gda4j.verbs.RdmaContext},
 * {@link io.gda4j.verbs.ProtectionDomain}, {@link io.gda4j.verbs.MemoryRegion},
 * {@link io.gda4j.verbs.CompletionQueue}, {@link io.gda4j.verbs.QueuePair}).
 *
 * <p>Nothing here is on a hot path: WQEs and CQEs are written and read through {@code io.gda4j.mlx5} on mapped
 * memory ({@code ibv_post_send} and {@code ibv_poll_cq} are header-inline and not exported anyway). Loading never
 * throws; {@link io.gda4j.verbs.Verbs#status()} says what this machine offers.
 *
 * <p>Internal: the NICs' bindings.
 */
package io.gda4j.verbs;
