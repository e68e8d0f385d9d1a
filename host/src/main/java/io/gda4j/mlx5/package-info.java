/**
 * mlx5 wire formats in pure Java: send WQEs, CQEs, doorbell records and doorbell values.
 *
 * <p>Nothing here calls native code. The same bytes are written by the GPU ({@code gda4j/layout/mlx5.cuh}), by
 * host-posted work on a real mlx5 NIC, and read by the emulated NIC; every offset and opcode lives in one
 * {@code *Descriptor} or constants class and is checked against rdma-core's {@code <infiniband/mlx5dv.h>} by the golden
 * tests.
 *
 * <p>Internal: the bytes the NICs and the transports share.
 */
package io.gda4j.mlx5;
