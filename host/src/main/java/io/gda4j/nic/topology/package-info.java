/**
 * Which NIC each GPU should use, read from the PCIe tree as Linux shows it in sysfs, the way NCCL's topology search
 * and {@code nvidia-smi topo -m} do: {@link io.gda4j.nic.topology.PciTopology} reads the tree (from a root path, so
 * tests pass a fake one), {@link io.gda4j.nic.topology.PathType} classifies the path between a GPU and a NIC
 * (PIX, PXB, PHB, NODE, SYS), and {@link io.gda4j.nic.topology.NicAffinity} gives each local rank's GPU the closest
 * NIC port, spreading equally close GPUs over equally close ports, and refuses a pair GPUDirect RDMA cannot serve
 * ({@link io.gda4j.nic.topology.NicPlacement} holds the two settings that change its mind).
 *
 * <p>Internal: its settings are {@code GDA4J_NIC_DEVICE} and {@code GDA4J_NIC_GDR_LEVEL}; {@code gda4j info} prints
 * the matrix it reads.
 */
package io.gda4j.nic.topology;
