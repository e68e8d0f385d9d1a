/**
 * The host proxy path (MSCCL++ PortChannel style): GPU threads push 16-byte triggers into a FIFO in pinned host
 * memory ({@link io.gda4j.proxy.TriggerFifoDescriptor}), proxy threads ({@link io.gda4j.proxy.ProxyService}, an
 * Agrona agent loop each: {@link io.gda4j.proxy.ProxyThread}) pop them and a {@link io.gda4j.proxy.TriggerHandler} executes them: the copy
 * engine for puts, stream-ordered writes for signals, stream writes of a completion word for flushes (the writes of
 * one poll that follow each other in one driver call: {@code StreamWriteBatch}). Registered as
 * the {@code proxy} transport through {@link java.util.ServiceLoader} ({@link io.gda4j.proxy.ProxyTransport}).
 *
 * <p>The verbs handler ({@code VerbsHandler}, set up by {@link io.gda4j.proxy.VerbsSession}) posts RDMA
 * work requests from the proxy thread. Across processes each rank publishes a
 * {@link io.gda4j.proxy.VerbsOfferDescriptor offer}: its heap's key and its credit blocks, and over mlx5 the endpoint
 * of the RC QP it created for each pair ({@link io.gda4j.nic.RcExchange}, shared with ibgda: each side connects its QP
 * to the QP number, PSN and LID/GID the other published), over the emulated NIC (one host) the memory a peer maps
 * instead. The mlx5 path is tested on the CPU only (against emulated NICs connected by QP number within one JVM):
 * no RDMA NIC was available to run it.
 *
 * <p>Internal: the module exports no API; on the class path or the module path it adds the {@code proxy} transport
 * ({@code GDA4J_TRANSPORT=proxy}, the {@code GDA4J_PROXY_*} settings).
 */
package io.gda4j.proxy;
