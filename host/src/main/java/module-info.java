/**
 * gda4j's library: worlds of ranks over p2p, ibgda and any transport found through {@link java.util.ServiceLoader},
 * their symmetric heaps, the CUDA layer they run on, and MoE dispatch and combine.
 *
 * <p>The API is the packages exported to everyone below (README.md's "API" table lists them too, and a test holds
 * the two together): start at {@link io.gda4j.world} and {@link io.gda4j.moe}. The others are internal: the
 * transports, the NICs and their bindings, exported only to the gda4j modules built on them.
 */
@SuppressWarnings({
    "module", // the qualified exports name modules built on this one, which are not there when it is compiled
    "requires-automatic", "requires-transitive-automatic" // JCuda, JNA and Agrona ship no module-info
})
module io.gda4j.host {
    requires transitive io.gda4j.gdrcopy;
    requires io.gda4j.ptx;
    requires transitive jcuda;
    requires com.sun.jna;
    requires org.agrona;

    exports io.gda4j.bootstrap;
    exports io.gda4j.config;
    exports io.gda4j.cuda;
    exports io.gda4j.hostflag;
    exports io.gda4j.moe;
    exports io.gda4j.moe.check;
    exports io.gda4j.moe.core;
    exports io.gda4j.moe.ht;
    exports io.gda4j.moe.ll;
    exports io.gda4j.moe.tensor;
    exports io.gda4j.transport;
    exports io.gda4j.world;

    exports io.gda4j.ibgda to io.gda4j.samples;
    exports io.gda4j.mlx5 to io.gda4j.proxy;
    exports io.gda4j.nic to io.gda4j.proxy, io.gda4j.samples;
    exports io.gda4j.nic.emulated to io.gda4j.proxy, io.gda4j.samples;
    exports io.gda4j.nic.mlx5 to io.gda4j.samples;
    exports io.gda4j.nic.topology to io.gda4j.samples;
    exports io.gda4j.verbs to io.gda4j.samples;

    // JNA calls cuda.HostFunctions' callback (LibCuda.HostFn, in a class of the package's own) by reflection.
    opens io.gda4j.cuda to com.sun.jna;

    uses io.gda4j.nic.NicProvider;
    uses io.gda4j.transport.TransportProvider;
    uses io.gda4j.world.DeviceErrorDecoder;
    provides io.gda4j.nic.NicProvider with io.gda4j.nic.mlx5.Mlx5NicProvider, io.gda4j.nic.emulated.EmulatedNicProvider;
    provides io.gda4j.transport.TransportProvider with io.gda4j.p2p.P2pTransport, io.gda4j.ibgda.IbgdaTransport;
    provides io.gda4j.world.DeviceErrorDecoder with io.gda4j.ibgda.IbgdaErrorDecoder, io.gda4j.p2p.P2pErrorDecoder,
            io.gda4j.moe.MoeErrorDecoder;
}
