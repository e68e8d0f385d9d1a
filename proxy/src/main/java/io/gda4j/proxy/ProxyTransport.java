package io.gda4j.proxy;

import io.gda4j.config.GivenSettings;
import io.gda4j.config.Setting;
import io.gda4j.config.Settings;
import io.gda4j.cuda.CudaDevice;
import io.gda4j.cuda.IpcMemory;
import io.gda4j.cuda.MappedHostMemory;
import io.gda4j.nic.MemoryKind;
import io.gda4j.nic.Nic;
import io.gda4j.nic.NicChoice;
import io.gda4j.nic.NicConfig;
import io.gda4j.nic.NicOptions;
import io.gda4j.nic.NicSelection;
import io.gda4j.nic.Nics;
import io.gda4j.nic.emulated.SoftwareNic;
import io.gda4j.transport.LinkEnd;
import io.gda4j.transport.PeerLink;
import io.gda4j.transport.RemotePeer;
import io.gda4j.transport.Transport;
import io.gda4j.transport.TransportProvider;
import io.gda4j.world.Rank;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The {@code proxy} transport (PortChannel): the GPU pushes 16-byte triggers, host proxy threads execute them with
 * a handler chosen per peer ({@link ProxyConfig#HANDLER}): the copy engine for a peer on this host, or the verbs
 * handler (RDMA work requests the proxy thread posts toward the peer's NIC) for a peer on another host or when the
 * setting forces it. The copy engine works for any pair of ranks in this process (copies are staged by the driver
 * where the GPUs cannot reach each other), so {@code auto} picks the transport last, after p2p and ibgda; and between
 * processes of one host, into the peer heap that the world mapped by CUDA IPC. The verbs handler connects ranks of
 * this process over one NIC (GDA4J_NIC: mlx5, or the emulated NIC, whose figures say so), and ranks of other
 * processes: each process publishes its heap's key and its credit blocks ({@link VerbsOffer}) on the world's offer
 * all-gather, with, over mlx5, the endpoint of the RC QP it created for each pair ({@code io.gda4j.nic.RcExchange},
 * shared with ibgda), and over the emulated NIC (one host), its heap's atomic lock line and the credit blocks as
 * memory the peer maps; each process then connects its side of each pair from the peer's offer.
 *
 * <p>Ownership: every link of a world shares one {@link ProxyService}, created by the first {@link #connect} and
 * closed with the last link (a world closes all its links, so closing the world stops the proxy threads). A
 * provider instance that outlives a world starts a fresh service for the next one.
 */
public final class ProxyTransport implements TransportProvider {
    /** The settings of the world this instance serves, and the proxy's, resolved from them once. */
    private final GivenSettings given = new GivenSettings();
    private ProxyConfig config;
    private ProxyService service;
    private int links;
    /** The verbs handler's NIC and session of the current world (opened by its first verbs link), or null. */
    private Nic verbsNic;
    private VerbsSession verbs;
    /** The second direction of a verbs pair, made with the first and taken by the world's later connect(b, a). */
    private final Map<Long, VerbsLink> reverseLinks = new HashMap<>();

    @Override
    public List<Setting<?>> settings() {
        return ProxyConfig.SETTINGS;
    }

    @Override
    public synchronized void configure(Settings worldSettings) {
        given.set(worldSettings);
        config = null;
    }

    /** The proxy's settings, resolved once from the given settings. */
    private synchronized ProxyConfig config() {
        if (config == null) {
            config = ProxyConfig.resolve(given.get());
        }
        return config;
    }

    /** Which NIC the verbs handler posts on (GDA4J_NIC, as the world's settings say). */
    private NicChoice nicChoice() {
        return given.get().get(NicConfig.NIC);
    }

    /**
     * {@link Transport#PROXY}: a rank with such a peer sets its view flag (the device's quiet() flushes its channels
     * too); its ADDs are GPU atomics (the atomic kernel the proxy launches), and each put costs the proxy thread a
     * driver call.
     */
    @Override
    public Transport transport() {
        return Transport.PROXY;
    }

    @Override
    public int autoPreference() {
        return 20;
    }

    @Override
    public Optional<String> unavailableReason(LinkEnd local, LinkEnd peer) {
        try {
            long heap = Math.max(local.heapSizeBytes(), peer.heapSizeBytes());
            if (heap > TriggerFifoDescriptor.FIELD_LIMIT) {
                return Optional.of("the symmetric heap of " + heap + " bytes is larger than a proxy trigger can address"
                        + " (2^" + TriggerFifoDescriptor.OFFSET_BITS + " bytes)");
            }
            ProxyConfig config = config();
            if (config.handler().forPeer(true) == ProxyConfig.Handler.VERBS) {
                return verbsNicUnavailable();
            }
            if (config.signalPath() == ProxyConfig.SignalPath.DIRECT && !peerAccess(local, peer)) {
                return Optional.of("signal path 'direct' needs peer access from GPU " + local.device().ordinal()
                        + " to GPU " + peer.device().ordinal() + ", which it lacks: set " + ProxyConfig.SIGNAL_PATH_ENV
                        + " to auto or peer-stream");
            }
            return Optional.empty();
        } catch (RuntimeException e) {
            return Optional.of("cannot check the pair: " + e.getMessage());
        }
    }

    private static boolean peerAccess(LinkEnd local, LinkEnd peer) {
        return local.device().ordinal() == peer.device().ordinal() || local.device().canAccessPeer(peer.device());
    }

    /** Why the verbs handler has no NIC here (the NIC choice of GDA4J_NIC), or empty. */
    private Optional<String> verbsNicUnavailable() {
        NicSelection selection = Nics.select(nicChoice());
        return selection.found() ? Optional.empty()
                : Optional.of("the verbs proxy handler needs a NIC: " + selection.reason());
    }

    /**
     * One sentence for {@code gda4j info}: the configured handler choice and what it means for peers of this host and
     * of other hosts, with the NIC the verbs handler would use. Never throws.
     */
    public String describeHandlers() {
        try {
            ProxyConfig config = config();
            NicSelection nic = Nics.select(nicChoice());
            String verbs = !nic.found() ? "verbs (no NIC here, see below)"
                    : "verbs on the " + (nic.provider().name().equals(Nic.EMULATED)
                    ? "emulated NIC (a software model; its figures are labelled emulated)"
                    : nic.provider().name() + " NIC");
            boolean local = config.handler().forPeer(true) == ProxyConfig.Handler.VERBS;
            boolean remote = config.handler().forPeer(false) == ProxyConfig.Handler.VERBS;
            String processes = nic.found() && nic.provider().name().equals(Nic.EMULATED)
                    ? ", in this process and in other processes of this host"
                    : ", in this process and in other processes (RC endpoints exchanged on the bootstrap)";
            return "handler " + config.handler().label() + " (" + ProxyConfig.HANDLER_ENV + "): peers of this host use "
                    + (local ? verbs + processes : "the copy engine") + "; peers of other hosts"
                    + " use " + (remote ? verbs : "the copy engine, which cannot reach them")
                    + ((local || remote) && !nic.found() ? ". No NIC for verbs: " + nic.reason() : "");
        } catch (RuntimeException e) {
            return "handler: cannot resolve the proxy settings: " + e.getMessage();
        }
    }

    @Override
    public String possibleHere(List<CudaDevice> gpus) {
        return "possible between any two ranks of this host (host proxy threads move the data with the copy "
                + "engine; staged through the host where GPUs have no peer path); " + describeHandlers();
    }

    @Override
    public Optional<String> describeLink(LinkEnd local, PeerLink link) {
        return link.resources() instanceof ProxyChannel pc ? Optional.of(" (proxy handler: " + pc.handlerLabel() + ")")
                : Optional.empty();
    }

    /**
     * Which handler serves the link from {@code local} to {@code peer} ("copy engine", "verbs on emulated NIC
     * emulated#1 (...)"), or empty when that link is not a proxy link of this process.
     */
    public static Optional<String> handlerOf(Rank local, int peer) {
        try {
            PeerLink link = local.link(peer);
            return link != null && link.resources() instanceof ProxyChannel pc ? Optional.of(pc.handlerLabel())
                    : Optional.empty();
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    /** The NIC of {@code local}'s verbs proxy links (the emulated NIC's figures must say so), or empty. */
    public static Optional<Nic> nicOf(Rank local) {
        for (int p = 0; p < local.worldSize(); p++) {
            try {
                PeerLink link = local.link(p);
                if (link != null && link.resources() instanceof ProxyChannel pc && pc.nic().isPresent()) {
                    return pc.nic();
                }
            } catch (RuntimeException e) {
                // no link to that peer
            }
        }
        return Optional.empty();
    }

    /**
     * Why the verbs handler cannot connect a rank of this process to {@code peer}, a rank of another process, over a
     * NIC of provider {@code nicName}, or empty. A real NIC connects any pair by RC endpoint (each side's QP moved to
     * RTR towards the QP number, PSN and LID/GID the other published); the emulated NIC's atomics across processes
     * take a lock line in the target's GPU memory with GPU atomics, which the link between the two GPUs must carry.
     */
    static Optional<String> verbsAcrossProcessesReason(String nicName, RemotePeer peer) {
        if (Nic.EMULATED.equals(nicName) && !peer.sameHost()
                && (!peer.nativeAtomics() || peer.heapHandle() == null)) {
            return Optional.of("the verbs proxy handler: " + SoftwareNic.otherMachineReason(peer.description()));
        }
        if (Nic.EMULATED.equals(nicName) && !peer.nativeAtomics()) {
            return Optional.of("the verbs proxy handler across processes serialises the emulated NIC's atomics on a"
                    + " heap with a lock word in that rank's GPU memory, taken by GPU atomics through CUDA IPC, and"
                    + " this GPU's link to " + peer.description() + "'s GPU carries no atomics (no NVLink, or a GPU"
                    + " hidden by CUDA_VISIBLE_DEVICES): set " + NicConfig.NIC_ENV + " to mlx5 where the host has an"
                    + " RDMA NIC, or " + ProxyConfig.HANDLER_ENV + " to auto or copy");
        }
        return Optional.empty();
    }

    @Override
    public PeerLink connect(LinkEnd local, LinkEnd peer) {
        ProxyConfig config = config();
        if (config.handler().forPeer(true) == ProxyConfig.Handler.VERBS) { // ranks of one process share a host
            return connectVerbs(local, peer, config);
        }
        boolean peerStream = config.signalPath() == ProxyConfig.SignalPath.PEER_STREAM
                || (config.signalPath() == ProxyConfig.SignalPath.AUTO && !peerAccess(local, peer));
        ProxyService s = acquire(config);
        try {
            return ProxyChannel.open(local, peer, s, config, peerStream, c -> release(s)).link();
        } catch (RuntimeException e) {
            release(s);
            throw e;
        }
    }

    private PeerLink connectVerbs(LinkEnd local, LinkEnd peer, ProxyConfig config) {
        ProxyService s = acquire(config);
        try {
            VerbsLink link;
            VerbsSession session;
            synchronized (this) {
                session = verbsSession(local, config, false);
                verbs.registerHeap(local.rank(), local.context(), local.heapBase(), local.heapSizeBytes(),
                        MemoryKind.DEVICE);
                verbs.registerHeap(peer.rank(), peer.context(), peer.heapBase(), peer.heapSizeBytes(),
                        MemoryKind.DEVICE);
                link = reverseLinks.remove(pairKey(local.rank(), peer.rank()));
                if (link == null) {
                    VerbsLink[] both = verbs.connect(local.rank(), local.context(), "rank " + local.rank(),
                            peer.rank(), peer.context(), "rank " + peer.rank());
                    link = both[0];
                    reverseLinks.put(pairKey(peer.rank(), local.rank()), both[1]);
                }
            }
            return ProxyChannel.openVerbs(local, peer, s, config, link, session, c -> release(s)).link();
        } catch (RuntimeException e) {
            release(s);
            throw e;
        }
    }

    /**
     * The verbs session of the current world, opened (with its NIC) by the first caller. {@code acrossProcesses}: the
     * world's one rank of this process, {@code local}, lends and maps memory across processes through its GPU.
     */
    private VerbsSession verbsSession(LinkEnd local, ProxyConfig config, boolean acrossProcesses) {
        if (verbs == null) {
            Nic nic = Nics.open(nicChoice(), NicOptions.defaults());
            try {
                // Every message takes at most three WQEBBs with its credit traffic: a queue of four per credit never
                // makes the proxy wait for a slot (where the NIC allows one that deep).
                int wanted = Math.max(64, 4 * config.credits());
                int sq = Math.min(Integer.highestOneBit(nic.capabilities().maxSqWqebbs()),
                        Integer.highestOneBit(wanted - 1) << 1);
                verbs = acrossProcesses ? new VerbsSession(nic, bytes -> pinnedWords(local, bytes), sq,
                        CudaCrossProcessMemory.credits(local.context()),
                        CudaCrossProcessMemory.lockLine(local.context()))
                        : new VerbsSession(nic, bytes -> pinnedWords(local, bytes), sq);
                verbsNic = nic;
            } catch (RuntimeException e) {
                nic.close();
                throw e;
            }
        }
        return verbs;
    }

    private static long pairKey(int from, int to) {
        return (long) from << 32 | (to & 0xffffffffL);
    }

    /** Credit blocks in pinned host memory mapped into the GPU (the emulated NIC's CUDA executor writes them). */
    private static VerbsSession.WordMemory pinnedWords(LinkEnd owner, int bytes) {
        MappedHostMemory m = owner.context().allocateMappedHost(bytes);
        m.hostBuffer().put(new byte[bytes]).clear();
        return new VerbsSession.WordMemory() {
            @Override
            public long address() {
                return m.hostAddress(); // also the device pointer, under unified addressing
            }

            @Override
            public ByteBuffer buffer() {
                return m.hostBuffer();
            }

            @Override
            public void close() {
                m.close();
            }
        };
    }

    /**
     * Across processes of one host the copy engine copies into the peer's heap as mapped by CUDA IPC, and signals
     * take the direct path from this process's stream: the peer-stream path would need the peer's context. The verbs
     * handler connects them over the NIC ({@link #verbsAcrossProcessesReason}); it has no signal path.
     */
    @Override
    public Optional<String> unavailableAcrossProcesses(LinkEnd local, RemotePeer peer) {
        try {
            long heap = peer.heapBytes(); // the world checked that every heap has this size
            if (heap > TriggerFifoDescriptor.FIELD_LIMIT) {
                return Optional.of("the symmetric heap of " + heap + " bytes is larger than a proxy trigger can address"
                        + " (2^" + TriggerFifoDescriptor.OFFSET_BITS + " bytes)");
            }
            ProxyConfig config = config();
            if (config.handler().forPeer(peer.sameHost()) == ProxyConfig.Handler.VERBS) {
                NicSelection selection = Nics.select(nicChoice());
                return selection.found() ? verbsAcrossProcessesReason(selection.provider().name(), peer)
                        : Optional.of("the verbs proxy handler needs a NIC: " + selection.reason());
            }
            if (!peer.sameHost()) {
                return Optional.of(peer.description() + " runs on another host, which the copy engine does not reach:"
                        + " set " + ProxyConfig.HANDLER_ENV + " to auto or verbs (RDMA through a NIC)");
            }
            if (config.signalPath() == ProxyConfig.SignalPath.PEER_STREAM) {
                return Optional.of("signal path 'peer-stream' needs the peer's CUDA context, which lives in another"
                        + " process: set " + ProxyConfig.SIGNAL_PATH_ENV + " to auto or direct");
            }
            return Optional.empty();
        } catch (RuntimeException e) {
            return Optional.of("cannot check the pair: " + e.getMessage());
        }
    }

    /**
     * With the verbs handler: {@code local}'s heap registered on this process's NIC (once), its credit blocks for
     * every rank of the world, and over mlx5 a QP per pair with its endpoint, over the emulated NIC its heap's atomic
     * lock line ({@link VerbsOffer}); only where some peer in {@code served} uses the verbs handler (under auto, a
     * peer of another host). The copy engine offers nothing.
     */
    @Override
    public Optional<byte[]> offerAcrossProcesses(LinkEnd local, List<RemotePeer> served) {
        ProxyConfig config = config();
        if (served.stream().noneMatch(p -> config.handler().forPeer(p.sameHost()) == ProxyConfig.Handler.VERBS)) {
            return Optional.empty();
        }
        synchronized (this) {
            VerbsSession session = verbsSession(local, config, true);
            session.registerHeap(local.rank(), local.context(), local.heapBase(), local.heapSizeBytes(),
                    MemoryKind.DEVICE);
            return Optional.of(session.offerAcrossProcesses(local.rank(), local.worldSize()).encode());
        }
    }

    /** Closes what {@link #offerAcrossProcesses} opened when the world failed before any link was made. */
    @Override
    public void abandonAcrossProcesses(LinkEnd local) {
        VerbsSession session;
        Nic nic;
        synchronized (this) {
            if (links != 0 || verbs == null) {
                return; // the links close it
            }
            session = verbs;
            nic = verbsNic;
            verbs = null;
            verbsNic = null;
        }
        try {
            session.close();
        } finally {
            nic.close();
        }
    }

    @Override
    public PeerLink connectAcrossProcesses(LinkEnd local, RemotePeer peer) {
        ProxyConfig config = config();
        if (config.handler().forPeer(peer.sameHost()) == ProxyConfig.Handler.VERBS) {
            return connectVerbsAcrossProcesses(local, peer, config);
        }
        ProxyService s = acquire(config);
        try {
            return ProxyChannel.openAcrossProcesses(local, peer, s, config, c -> release(s)).link();
        } catch (RuntimeException e) {
            release(s);
            throw e;
        }
    }

    private PeerLink connectVerbsAcrossProcesses(LinkEnd local, RemotePeer peer, ProxyConfig config) {
        byte[] published = peer.offer();
        if (published == null) {
            throw new ProxyException("proxy: " + peer.description() + " published no verbs proxy offer, so its process"
                    + " does not reach rank " + local.rank() + " with the verbs handler: set the same GDA4J_TRANSPORT"
                    + " and " + ProxyConfig.HANDLER_ENV + " in every process of the job");
        }
        VerbsOffer offer = VerbsOffer.decode(peer.description(), published);
        ProxyService s = acquire(config);
        IpcMemory wire = null;
        try {
            // The emulated NIC's wire to a rank of another host (a named host of this machine): its heap, mapped here
            // for this link; a real NIC (the peer offers RC endpoints) needs no mapping.
            if (!peer.sameHost() && offer.endpoints().isEmpty() && peer.heapHandle() != null) {
                wire = local.context().openIpcMemory(peer.heapHandle(), peer.heapBytes(), peer.description()
                        + "'s heap (the emulated NIC's wire to another host)");
            }
            IpcMemory linkWire = wire;
            VerbsLink link;
            VerbsSession session;
            synchronized (this) {
                if (verbs == null) {
                    throw new IllegalStateException("proxy: rank " + local.rank() + " connects to "
                            + peer.description() + " with the verbs handler before it offered anything");
                }
                session = verbs;
                link = session.connectAcrossProcesses(local.rank(), local.context(), peer.rank(), peer.description(),
                        wire != null ? wire.address() : peer.heapAddress(), peer.heapBytes(), offer);
            }
            return ProxyChannel.openVerbsAcrossProcesses(local, peer, s, config, link, session, c -> {
                try {
                    release(s);
                } finally {
                    if (linkWire != null) {
                        linkWire.close();
                    }
                }
            }).link();
        } catch (RuntimeException e) {
            release(s);
            if (wire != null) {
                try {
                    wire.close();
                } catch (RuntimeException closing) {
                    e.addSuppressed(closing);
                }
            }
            throw e;
        }
    }

    /** The service of the current world (started by its first link), counting one link more. */
    private synchronized ProxyService acquire(ProxyConfig config) {
        if (service == null || service.isClosed()) {
            service = new ProxyService(config);
        }
        links++;
        return service;
    }

    /** One link fewer on {@code s}; the last one closes it. */
    private void release(ProxyService s) {
        boolean last;
        VerbsSession session = null;
        Nic nic = null;
        synchronized (this) {
            links--;
            last = links == 0 && s == service;
            if (last) {
                service = null;
                session = verbs;
                nic = verbsNic;
                verbs = null;
                verbsNic = null;
                reverseLinks.clear();
            }
        }
        if (last) {
            try {
                s.close();
            } finally {
                // After the channels: nothing posts any more. QPs and registrations go before the NIC.
                try {
                    if (session != null) {
                        session.close();
                    }
                } finally {
                    if (nic != null) {
                        nic.close();
                    }
                }
            }
        }
    }
}
