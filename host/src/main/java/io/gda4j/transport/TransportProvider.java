package io.gda4j.transport;

import io.gda4j.config.Setting;
import io.gda4j.config.Settings;
import io.gda4j.cuda.CudaDevice;

import java.util.List;
import java.util.Optional;

/**
 * A way to reach a peer rank (p2p, ibgda, proxy), found through {@link java.util.ServiceLoader}: modules register
 * an implementation in {@code META-INF/services/io.gda4j.transport.TransportProvider}. The world asks each
 * provider, in {@link #autoPreference()} order, whether it can connect a pair, unless the configuration forces one.
 */
public interface TransportProvider {
    /**
     * The row of the transport table ({@code gda4j/transports.def}) of the peer entries this provider connects: its
     * code, its capabilities and the view flag its peers set.
     */
    Transport transport();

    /** The name users type ({@code --transport p2p}): the table row's {@link Transport#label()}. */
    default String name() {
        return transport().label();
    }

    /** This transport's own settings ({@code gda4j info} prints them; a command's options may set them). */
    default List<Setting<?>> settings() {
        return List.of();
    }

    /**
     * Hands the provider the settings of the world (or of {@code gda4j info}) that will use this instance, before any
     * other call: where it reads its own configuration ({@code ProxyConfig}, {@code IbgdaConfig}, the NIC choice),
     * once, rather than from the process.
     */
    default void configure(Settings settings) {
    }

    /** Lower is tried first by {@code auto}: p2p 0, ibgda 10, proxy 20. */
    int autoPreference();

    /** Why {@code local} cannot reach {@code peer} over this transport, or empty when it can. Never throws. */
    Optional<String> unavailableReason(LinkEnd local, LinkEnd peer);

    /** Connects {@code local} to {@code peer}; called only when {@link #unavailableReason} is empty. */
    PeerLink connect(LinkEnd local, LinkEnd peer);

    /**
     * Where {@code local}'s own ADDs must go because this transport's NIC adds to its words: the GPU address of a
     * loopback {@code DeviceQp} on {@code local}'s NIC (aligned: the peer entry keeps flags in its low bits), or 0
     * where this transport adds with GPU atomics or has no link to {@code local}: one path for the atomics on a word
     * (docs/ARCHITECTURE.md, "Ordering per transport"). Asked once every pair is connected.
     */
    default long loopbackAtomicsQp(LinkEnd local) {
        return 0;
    }

    /**
     * How {@code link}, one of {@code local}'s made by this provider, moves data, as result tables append it to
     * "rank 0 -> rank 1 over proxy": {@code " (proxy handler: copy engine)"}, {@code " on the emulated NIC (...)"};
     * empty where there is nothing to add. Never throws.
     */
    default Optional<String> describeLink(LinkEnd local, PeerLink link) {
        return Optional.empty();
    }

    /**
     * Where this transport can connect ranks on this machine, with {@code gpus} its CUDA devices, in one sentence for
     * {@code gda4j info} ({@code "possible between GPUs 0<->1"}; {@code "not possible: ..."} with the reason). Never
     * throws.
     */
    default String possibleHere(List<CudaDevice> gpus) {
        return "on the class path";
    }

    /**
     * What this host offers this transport for reaching ranks on other hosts (for ibgda: what libibverbs finds), in
     * one sentence, or empty for a transport that never leaves the host. The world quotes it when a job spans hosts.
     */
    default Optional<String> acrossHostsStatus() {
        return Optional.empty();
    }

    /**
     * Why this transport cannot connect {@code local} to {@code peer}, a rank of another process on this host, or
     * empty when it can. Never throws. By default a transport does not connect processes.
     */
    default Optional<String> unavailableAcrossProcesses(LinkEnd local, RemotePeer peer) {
        return Optional.of("transport " + name() + " does not connect processes yet");
    }

    /**
     * What every other process must know before this transport connects {@code local} across processes (its
     * registrations, keys, IPC handles), or empty when nothing. The world calls it once per process, only for a
     * transport that connects at least one of its pairs ({@code served}: those peers, with no offers yet; the proxy
     * offers verbs resources only where one of them uses the verbs handler), after
     * {@link #unavailableAcrossProcesses} and before any {@link #connectAcrossProcesses}; it publishes the bytes on
     * the bootstrap's all-gather, and each peer's connect receives them as {@link RemotePeer#offer()}.
     */
    default Optional<byte[]> offerAcrossProcesses(LinkEnd local, List<RemotePeer> served) {
        return Optional.empty();
    }

    /**
     * Frees what {@link #offerAcrossProcesses} made when the world fails before every pair is connected, also when
     * that offer itself failed halfway or was never asked for (then it frees what there is, or nothing); a no-op once
     * links exist (closing them frees it). Never called after a successful set-up.
     */
    default void abandonAcrossProcesses(LinkEnd local) {
    }

    /**
     * Connects {@code local} to {@code peer} in another process; called only when the reason above is empty, with the
     * offer the peer's process published for this transport (null when it published none).
     */
    default PeerLink connectAcrossProcesses(LinkEnd local, RemotePeer peer) {
        throw new UnsupportedOperationException("transport " + name() + " does not connect processes");
    }
}
