package io.gda4j.ibgda;

import io.gda4j.config.GivenSettings;
import io.gda4j.config.Setting;
import io.gda4j.config.Settings;
import io.gda4j.cuda.CudaDevice;
import io.gda4j.nic.Nic;
import io.gda4j.nic.NicConfig;
import io.gda4j.nic.NicSelection;
import io.gda4j.nic.Nics;
import io.gda4j.nic.emulated.SoftwareNic;
import io.gda4j.transport.LinkEnd;
import io.gda4j.transport.PeerLink;
import io.gda4j.transport.RemotePeer;
import io.gda4j.transport.Transport;
import io.gda4j.transport.TransportProvider;
import io.gda4j.verbs.Verbs;
import io.gda4j.world.Rank;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The IBGDA transport ({@code --transport ibgda}): each pair of ranks gets an RC QP pair on a {@link Nic}, and each
 * rank's peer entry points at its QP's {@link DeviceQp}, on which {@code gda4j/transport/ibgda/qp.cuh} posts WQEs and
 * rings the doorbell from the kernel. The NIC is chosen by {@link IbgdaConfig#nic()}: mlx5 where a device exists, else
 * the emulated NIC (whose figures must be labelled "emulated NIC": see {@link #nicOf(Rank)}). Each rank's GPU gets its
 * own mlx5 port, the closest on the PCIe tree ({@link RankNics}); a rank whose GPU has no NIC near enough for
 * GPUDirect RDMA makes this transport unavailable to it, with the reason.
 *
 * <p>{@link java.util.ServiceLoader} makes one instance per world, so the instance holds the world's
 * {@link IbgdaSession}, opened at the first connect.
 */
public final class IbgdaTransport implements TransportProvider {
    private static final Map<LinkEnd, IbgdaSession> SESSIONS = Collections.synchronizedMap(new IdentityHashMap<>());

    /** The settings of the world this instance serves; its configuration is resolved from them once. */
    private final GivenSettings given = new GivenSettings();
    private IbgdaConfig config;
    private NicSelection selection;
    private RankNics nics;
    private IbgdaSession session;

    /**
     * {@link Transport#IBGDA}: a rank with such a peer sets its view flag (quiet() drains its QPs); its ADDs are NIC
     * atomics, and it posts each message as one work request once the message is whole, from one block.
     */
    @Override
    public Transport transport() {
        return Transport.IBGDA;
    }

    @Override
    public int autoPreference() {
        return 10;
    }

    @Override
    public List<Setting<?>> settings() {
        return IbgdaConfig.SETTINGS;
    }

    @Override
    public synchronized void configure(Settings worldSettings) {
        given.set(worldSettings);
        config = null;
    }

    @Override
    public synchronized Optional<String> unavailableReason(LinkEnd local, LinkEnd peer) {
        return resolve().or(() -> nics.unusableReason(local)).or(() -> nics.unusableReason(peer));
    }

    /** Resolves the configuration and the NIC choice once; why ibgda cannot run at all here, or empty. */
    private Optional<String> resolve() {
        try {
            if (config == null) {
                config = IbgdaConfig.resolve(given.get());
                selection = Nics.select(config.nic());
                nics = selection.found() ? new RankNics(selection.provider(), config.placement()) : null;
            }
        } catch (RuntimeException e) {
            return Optional.of("bad IBGDA configuration: " + e.getMessage());
        }
        return selection.found() ? Optional.empty() : Optional.of(selection.reason());
    }

    /**
     * Across processes: over mlx5, each side's RC QP of a pair is connected to the QP number, PSN and LID/GID the
     * other side published ({@code io.gda4j.nic.RcExchange}); over the emulated NIC (one host), its engine executes
     * the WQEs on the peer's heap through the CUDA IPC mapping, and its strict atomics take a lock line in the peer's
     * GPU memory (see {@link IbgdaSession#linkAcrossProcesses}), which needs atomics on the link between the two GPUs.
     */
    @Override
    public synchronized Optional<String> unavailableAcrossProcesses(LinkEnd local, RemotePeer peer) {
        Optional<String> why = resolve();
        if (why.isPresent()) {
            return why;
        }
        why = acrossProcessesReason(selection.provider().name(), peer);
        // No rank yet (gda4j compare asks what connects processes at all): the NIC choice alone answers.
        return why.isPresent() || local == null ? why : nics.unusableReason(local);
    }

    /** What libibverbs finds on this host: the RDMA NICs ibgda between hosts would use, or why there are none. */
    @Override
    public Optional<String> acrossHostsStatus() {
        return Optional.of(Verbs.status().sentence());
    }

    /**
     * Why a NIC of provider {@code nicName} cannot connect {@code peer} of another process, or empty. A real NIC
     * connects any pair by RC endpoint (whether this rank's GPU has a NIC near enough is asked apart); the emulated
     * NIC only where the two GPUs share atomics, and on another host only where that host is a process of this
     * machine with a name of its own (its heap handle means something here).
     */
    static Optional<String> acrossProcessesReason(String nicName, RemotePeer peer) {
        if (Nic.EMULATED.equals(nicName) && !peer.sameHost()
                && (!peer.nativeAtomics() || peer.heapHandle() == null)) {
            return Optional.of("ibgda: " + SoftwareNic.otherMachineReason(peer.description()));
        }
        if (Nic.EMULATED.equals(nicName) && !peer.nativeAtomics()) {
            return Optional.of("ibgda over the emulated NIC across processes serialises NIC atomics on a rank's memory"
                    + " with a lock word in that rank's GPU memory, taken by GPU atomics through CUDA IPC, and this "
                    + "GPU's link to " + peer.description() + "'s GPU carries no atomics (no NVLink, or a GPU hidden by"
                    + " CUDA_VISIBLE_DEVICES): use --nic mlx5 where the host has an RDMA NIC, --transport proxy, or"
                    + " one JVM (LocalWorld)");
        }
        return Optional.empty();
    }

    @Override
    public synchronized Optional<byte[]> offerAcrossProcesses(LinkEnd local, List<RemotePeer> served) {
        Optional<String> why = resolve();
        if (why.isPresent()) {
            throw new IllegalStateException("ibgda: " + why.get());
        }
        return Optional.of(session(local).offerAcrossProcesses(local));
    }

    @Override
    public synchronized PeerLink connectAcrossProcesses(LinkEnd local, RemotePeer peer) {
        Optional<String> why = unavailableAcrossProcesses(local, peer);
        if (why.isPresent()) {
            throw new IllegalStateException("ibgda: " + why.get());
        }
        return session(local).linkAcrossProcesses(local, peer);
    }

    @Override
    public synchronized void abandonAcrossProcesses(LinkEnd local) {
        if (session != null) {
            session.abandon();
        }
    }

    private IbgdaSession session(LinkEnd local) {
        if (session == null) {
            session = new IbgdaSession(config, nics);
        }
        SESSIONS.put(local, session);
        return session;
    }

    @Override
    public synchronized PeerLink connect(LinkEnd local, LinkEnd peer) {
        Optional<String> why = unavailableReason(local, peer);
        if (why.isPresent()) {
            throw new IllegalStateException("ibgda: " + why.get());
        }
        if (session == null) {
            session = new IbgdaSession(config, nics);
        }
        SESSIONS.put(local, session);
        SESSIONS.put(peer, session);
        return session.link(local, peer);
    }

    /** {@code local}'s loopback QP, on which its own ADDs go ({@link io.gda4j.world.AtomicRouting}); 0 without links. */
    @Override
    public synchronized long loopbackAtomicsQp(LinkEnd local) {
        return session == null ? 0 : session.loopbackAtomicsQp(local);
    }

    /** Whether a NIC is there, which one, and how ibgda connects processes. */
    @Override
    public String possibleHere(List<CudaDevice> gpus) {
        NicSelection s = NicConfig.selection(given.get());
        return s.found() ? "possible with the " + (s.provider().name().equals(Nic.EMULATED)
                ? "emulated NIC (a software model; a test instrument, not a network)" : s.provider().name()
                + " NIC") + " (--transport ibgda; auto prefers p2p where it works; between processes: over mlx5"
                + " by RC endpoints exchanged on the bootstrap, untested on hardware, or on one host over the"
                + " emulated NIC)"
                : "not possible: " + s.reason();
    }

    /** Which NIC carried the link's figures, and whether quiet ends with the PCIe flush; the emulated NIC says so. */
    @Override
    public Optional<String> describeLink(LinkEnd local, PeerLink link) {
        try {
            IbgdaSession s = SESSIONS.get(local);
            Nic nic = s == null ? null : s.nicOf(local).orElse(null);
            if (nic == null) {
                return Optional.empty();
            }
            String flush = s.flushOnQuietOf(local) ? ", PCIe flush on quiet" : "";
            return Optional.of(nic.isEmulated()
                    ? " on the emulated NIC (a software model: an engine thread executes the WQEs with CUDA copies;"
                    + " these are emulated NIC figures, not network figures" + flush + ")"
                    : " on " + nic.description() + flush);
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    /** The NIC serving {@code rank}'s IBGDA links, if it has any (for labels such as "emulated NIC" and stats). */
    public static Optional<Nic> nicOf(Rank rank) {
        IbgdaSession s = SESSIONS.get(rank);
        return s == null ? Optional.empty() : s.nicOf(rank);
    }

    /** Whether quiet on {@code rank}'s IBGDA QPs ends with the PCIe flush (after a get). */
    public static boolean flushesOnQuiet(Rank rank) {
        IbgdaSession s = SESSIONS.get(rank);
        return s != null && s.flushOnQuietOf(rank);
    }

    /** One line: whether {@code rank}'s quiet flushes, and whether discarded fetched values use the null MR. */
    public static String describeFetchedValues(Rank rank) {
        IbgdaSession s = SESSIONS.get(rank);
        return s == null ? "rank " + rank.rank() + " has no IBGDA links" : s.describeFetchedValues(rank);
    }

    static void forget(IbgdaSession session) {
        synchronized (SESSIONS) {
            SESSIONS.values().removeIf(s -> s == session);
        }
    }
}
