/**
 * The real mlx5 (ConnectX) NIC behind the {@link io.gda4j.nic.Nic} SPI: {@link io.gda4j.nic.mlx5.Mlx5Nic} opens a
 * device port, makes RC queue pairs whose libmlx5-allocated rings are mapped into the posting GPU (the doorbell
 * register as I/O memory), registers host and GPU memory (dma-buf, else nvidia-peermem), and hands out the null
 * MR for the PCIe flush. {@link io.gda4j.nic.mlx5.Mlx5NicProvider} registers it with
 * {@link java.util.ServiceLoader}. The layout and sizing facts it depends on live in small pure classes
 * ({@code Mlx5Rings}, {@code Mlx5QueueSizing}, {@code PageRange}, {@code GidSelection}) that are tested without
 * a NIC.
 *
 * <p>Internal: chosen with {@code GDA4J_NIC=mlx5} (or {@code auto} where an RDMA device exists).
 */
package io.gda4j.nic.mlx5;
