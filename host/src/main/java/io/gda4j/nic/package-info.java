/**
 * The NIC abstraction the IBGDA transport (and the proxy's NIC handler) is written against: a {@link io.gda4j.nic.Nic}
 * registers memory, makes reliable-connected queue pairs and hands out their rings, which use the mlx5 layouts of
 * {@code io.gda4j.mlx5} whatever the implementation. Two implementations: {@code Mlx5Nic} (a real ConnectX through
 * {@code io.gda4j.verbs}) and {@code EmulatedNic} (a software model: rings in mapped pinned memory, an engine
 * thread that executes WQEs with CUDA copies). {@link io.gda4j.nic.NicProvider}s are found with
 * {@link java.util.ServiceLoader}; {@link io.gda4j.nic.Nics#open} applies the {@code auto|mlx5|emulated} choice.
 * Which real NIC each GPU uses is decided by PCIe distance in {@code io.gda4j.nic.topology}.
 *
 * <p>A {@link io.gda4j.nic.QpAddress} is what one side of an RC connection tells the other; between processes (and
 * hosts) it travels as bytes ({@link io.gda4j.nic.RcEndpoints}, layout {@link io.gda4j.nic.RcEndpointsDescriptor}),
 * and {@link io.gda4j.nic.RcExchange} creates the QPs before the offers are published and connects each to the
 * peer's endpoint after: the one piece of code ibgda and the proxy's verbs handler share for it.
 *
 * <p>Internal: the transports' NIC layer; a program picks the NIC with {@code GDA4J_NIC}.
 */
package io.gda4j.nic;
