/**
 * The proxy transport (MSCCL++ PortChannel style): no API of its own. On the module path (or the class path) it
 * registers itself through {@link java.util.ServiceLoader}, and a world then offers the {@code proxy} transport.
 */
@SuppressWarnings({
    "module", // io.gda4j.samples, which it is exported to, is built on this module
    "requires-automatic" // JNA and Agrona ship no module-info
})
module io.gda4j.proxy {
    requires io.gda4j.host;
    requires com.sun.jna;
    requires org.agrona;

    exports io.gda4j.proxy to io.gda4j.samples;

    provides io.gda4j.transport.TransportProvider with io.gda4j.proxy.ProxyTransport;
    provides io.gda4j.world.DeviceErrorDecoder with io.gda4j.proxy.ProxyErrorDecoder;
}
