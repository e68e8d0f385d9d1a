/**
 * IBGDA: the transport in which a kernel builds mlx5 WQEs and rings the doorbell itself. {@link
 * io.gda4j.ibgda.IbgdaTransport} connects ranks through a {@link io.gda4j.nic.Nic} (real mlx5 or the emulated NIC),
 * {@link io.gda4j.ibgda.DeviceQp} puts each QP into GPU memory in the layout of {@link
 * io.gda4j.ibgda.DeviceQpDescriptor}, and {@code gda4j/transport/ibgda_qp.cuh} posts on it.
 * {@link io.gda4j.ibgda.IbgdaConfig} holds the settings (NIC choice, PCIe flush, queue depth).
 */
package io.gda4j.ibgda;
