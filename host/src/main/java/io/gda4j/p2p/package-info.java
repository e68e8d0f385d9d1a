/**
 * The p2p transport ({@code --transport p2p}): ranks of one host store straight into each other's heaps over NVLink
 * or PCIe, through CUDA peer access in one process or CUDA IPC across processes. Registered with the world through
 * {@link io.gda4j.transport.TransportProvider}; its device side is the {@code TRANSPORT_P2P} branch of
 * {@code gda4j/gda4j.cuh}.
 *
 * <p>Internal: a world finds it through {@link java.util.ServiceLoader}; choose it with {@code GDA4J_TRANSPORT=p2p}.
 */
package io.gda4j.p2p;
