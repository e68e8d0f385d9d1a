/**
 * IBGDA: the transport in which a kernel builds mlx5 WQEs and rings the doorbell itself. {@link
 * io.gda4j.ibgda.IbgdaTransport} connects ranks through a {@link io.gda4j.nic.Nic} (real mlx5 or the emulated NIC),
 * {@link io.gda4j.ibgda.DeviceQp} puts each QP into GPU memory in the layout of {@link
 * io.gda4j.ibgda.DeviceQpDescriptor}, and {@code gda4j/transport/ibgda/qp.cuh} posts on it.
 * {@link io.gda4j.ibgda.IbgdaConfig} holds the settings (NIC choice, PCIe flush, queue depth).
 *
 * <p>Across processes each rank publishes a {@link io.gda4j.ibgda.ProcessOfferDescriptor offer}: its heap's key and
 * address, and over mlx5 the endpoint of the RC QP it created for each pair ({@link io.gda4j.nic.RcExchange}: each
 * side connects its QP to the QP number, PSN and LID/GID the other published), over the emulated NIC (one host) the
 * IPC handle of its NIC words instead. The mlx5 path is tested on the CPU only (byte-exact and against recording
 * and emulated NICs): no RDMA NIC was available to run it.
 *
 * <p>Internal: a world finds it through {@link java.util.ServiceLoader}; choose it with {@code GDA4J_TRANSPORT=ibgda}
 * and set it up with the {@code GDA4J_IBGDA_*} and {@code GDA4J_NIC*} settings ({@code gda4j info} lists them).
 */
package io.gda4j.ibgda;
