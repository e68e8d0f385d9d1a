/**
 * The host proxy path (MSCCL++ PortChannel style): GPU threads push 16-byte triggers into a FIFO in pinned host
 * memory ({@link io.gda4j.proxy.TriggerFifoDescriptor}), proxy threads ({@link io.gda4j.proxy.ProxyService}, an
 * Agrona agent loop each: {@link io.gda4j.proxy.ProxyThread}) pop them and a {@link io.gda4j.proxy.TriggerHandler} executes them: the copy
 * engine for puts, stream-ordered writes for signals, stream writes of a completion word for flushes. Registered as
 * the {@code proxy} transport through {@link java.util.ServiceLoader} ({@link io.gda4j.proxy.ProxyTransport}).
 */
package io.gda4j.proxy;
