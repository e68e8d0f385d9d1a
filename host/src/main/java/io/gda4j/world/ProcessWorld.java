package io.gda4j.world;

import io.gda4j.bootstrap.Bootstrap;
import io.gda4j.bootstrap.BootstrapConfig;
import io.gda4j.bootstrap.BootstrapException;
import io.gda4j.bootstrap.LaunchEnvironment;
import io.gda4j.bootstrap.PeerFailedException;
import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.CudaContext;
import io.gda4j.cuda.CudaDevice;
import io.gda4j.cuda.CudaStatus;
import io.gda4j.cuda.IpcMemory;
import io.gda4j.cuda.ModuleImage;
import io.gda4j.transport.PeerLink;
import io.gda4j.transport.RemotePeer;
import io.gda4j.transport.Transport;
import io.gda4j.transport.TransportChoice;
import io.gda4j.transport.TransportOffers;
import io.gda4j.transport.TransportProvider;
import io.gda4j.transport.TransportSetupException;
import io.gda4j.transport.Transports;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A world of one rank per process, started by a launcher (torchrun, mpirun, srun, or {@code GDA4J_*} variables; see
 * {@link LaunchEnvironment}). Each process drives one GPU; the processes meet on the {@link Bootstrap} at the root's
 * address, publish a {@link PeerCard} each, and map each other's heaps by CUDA IPC, so kernels written for a
 * {@link LocalWorld} run unchanged over p2p.
 *
 * <h2>What is built</h2>
 * Processes of one host, on one GPU or several: every peer heap is mapped by CUDA IPC and handed to the transport of
 * the pair ({@link TransportProvider#connectAcrossProcesses}): p2p stores into it, the proxy's copy engine copies
 * into it, ibgda and the proxy's verbs handler over the emulated NIC execute their WQEs on it; over mlx5 they connect
 * an RC QP per pair instead, each side's to the QP number, PSN and LID/GID the other published (what the transports
 * need from each other, keys and QP endpoints, goes on one all-gather: {@link TransportOffers}; every pair is
 * connected before the closing barrier, so no WQE reaches a QP that is not ready). A peer on another host (its card's
 * host id differs: {@link WorldConfig#HOST_NAME_ENV}) is not mapped: only a transport that reaches it through a NIC
 * connects the pair (ibgda, the proxy's verbs handler), else the world is refused with each transport's reason
 * ({@link ProcessRoutes}, {@link TransportChoice}).
 *
 * <h2>Failures</h2>
 * The bootstrap watches every process (heartbeats; a silent or stopped process is found after the dead-after time,
 * {@link BootstrapConfig#DEAD_AFTER}, a killed one at once when its connection drops). When a peer dies, this
 * process's abort flag is raised (spinning kernels return ERR_ABORTED within microseconds) and {@link #checkErrors()}
 * throws a {@link RankDiedException} naming the dead rank. {@link #close()} then frees without waiting for the dead.
 * Peers' abort words are not mapped across processes, so a device error here reaches them through the bootstrap:
 * {@link #checkErrors()} (and {@link #abort()}) announce it, their abort flags are raised, and their kernels waiting
 * for this rank stop at once instead of at their timeout; their {@code checkErrors()} names this rank.
 *
 * <h2>Closing</h2>
 * A process must not free its heap while a peer may still write to it or keep it mapped: {@code close()} stops the
 * local kernels, closes its links (a proxy link drains what its thread still copies into a peer's heap), meets every
 * peer in a barrier, unmaps the peers' heaps, meets them again, and only then frees.
 * When a peer is dead the barriers are skipped.
 */
public final class ProcessWorld implements World {
    private final WorldConfig config;
    private final SymmetricHeap heap;
    private final Rank rank;
    private final LocalRanks local;
    private final List<PeerCard> cards;
    private final Bootstrap bootstrap;
    private final PeerFailures failures;
    /** The peers' heaps mapped here, by rank (null for this process's own rank). */
    private final IpcMemory[] mappings;
    /** Whether this rank's current error (or abort) was announced to the other processes; reset by clearErrors. */
    private boolean announced;

    private ProcessWorld(WorldConfig config, Rank rank, LocalRanks local, List<PeerCard> cards, Bootstrap bootstrap,
                         PeerFailures failures, IpcMemory[] mappings) {
        this.config = config;
        this.heap = new SymmetricHeap(config.heapSizeBytes());
        this.rank = rank;
        this.local = local;
        this.cards = List.copyOf(cards);
        this.bootstrap = bootstrap;
        this.failures = failures;
        this.mappings = mappings;
    }

    /** Joins the world that this process's launcher started, with the resolved configuration. */
    public static ProcessWorld create() {
        return create(WorldConfig.resolve(), LaunchEnvironment.fromSystem());
    }

    /**
     * Joins the world of {@code env}: picks this process's GPU, allocates its heap, meets every process on the
     * bootstrap, maps the peers' heaps and writes the device view. Returns once every process has done the same.
     *
     * @throws WorldSetupException when CUDA or the GPU is missing, or a pair cannot be connected (with every reason)
     * @throws BootstrapException  when a process does not arrive in time (naming it) or presents another job's token
     */
    public static ProcessWorld create(WorldConfig config, LaunchEnvironment env) {
        CudaStatus status = Cuda.status();
        if (!status.available()) {
            throw new WorldSetupException("a gda4j world needs a CUDA GPU: " + status.reason());
        }
        int gpu = gpuOf(config, env, Cuda.deviceCount());
        ModuleTable modules = new ModuleTable();
        CudaContext ctx = Cuda.device(gpu).primaryContext();
        Rank rank;
        try {
            rank = new Rank(env.rank(), env.worldSize(), ctx, config.heapSizeBytes(), config.waitTimeout(),
                    modules);
        } catch (RuntimeException e) {
            ctx.close();
            throw e;
        }
        LocalRanks local = new LocalRanks(List.of(rank), config, modules);
        PeerFailures failures = new PeerFailures(local::abort);
        Bootstrap bootstrap = null;
        IpcMemory[] mappings = new IpcMemory[env.worldSize()];
        try {
            bootstrap = Bootstrap.join(BootstrapConfig.of(env), failures);
            CudaDevice device = rank.device();
            PeerCard mine = new PeerCard(env.rank(), env.worldSize(), ProcessHandle.current().pid(),
                    rank.heapSizeBytes(), PeerCard.hostIdOf(config.hostName()), rank.heapMemory().exportIpcHandle(),
                    device.uuid(), device.pciBusId(),
                    config.hostName().isEmpty() ? PeerCard.localHostName() : config.hostName());
            byte[][] published = bootstrap.allGather(mine.encode());
            List<PeerCard> cards = new ArrayList<>();
            for (int r = 0; r < published.length; r++) {
                cards.add(PeerCard.decode(r, published[r]));
            }
            ProcessRoutes.Route[] routes = ProcessRoutes.plan(cards, env.rank());
            connect(rank, cards, routes, config.transport(), Transports.providers(config.settings()), bootstrap,
                    mappings);
            rank.writeDeviceView(config.waitTimeout().toNanos());
            // Every process has mapped every peer before any of them returns: a kernel launched after create() never
            // writes into a heap whose owner has not finished setting up.
            bootstrap.barrier();
            return new ProcessWorld(config, rank, local, cards, bootstrap, failures, mappings);
        } catch (RuntimeException e) {
            // Peers may hold our heap mapped already; telling them (the bootstrap closes) makes them fail too, and a
            // mapping of freed memory is harmless to a process that no longer launches kernels on it. The links go
            // before the mappings they copy into; a peer found dead from now on must not touch the freed abort word.
            failures.stop();
            rank.closeLinks(e);
            for (IpcMemory m : mappings) {
                if (m != null) {
                    LocalRanks.collect(e, m::close);
                }
            }
            LocalRanks.collect(e, modules::close);
            LocalRanks.collect(e, rank::close);
            if (bootstrap != null) {
                bootstrap.close();
            }
            throw e;
        }
    }

    /**
     * This process's GPU: {@code GDA4J_GPUS} indexed by the local rank when set (one entry per process of this host;
     * a GPU may repeat), else the GPU numbered as the local rank, else GPU 0 when the process sees a single GPU (a
     * launcher that gives each process its own {@code CUDA_VISIBLE_DEVICES}).
     */
    static int gpuOf(WorldConfig config, LaunchEnvironment env, int visible) {
        List<Integer> gpus = config.gpus();
        int gpu;
        if (!gpus.isEmpty()) {
            if (gpus.size() != env.localWorldSize()) {
                throw new WorldSetupException(String.format(Locale.ROOT, "%s lists %d GPU%s but %d processes of this "
                        + "job run on this host: list one GPU per process, in local-rank order (a GPU may repeat: "
                        + "%s=0,0 puts two processes on GPU 0)", WorldConfig.GPUS_ENV, gpus.size(),
                        gpus.size() == 1 ? "" : "s", env.localWorldSize(), WorldConfig.GPUS_ENV));
            }
            gpu = gpus.get(env.localRank());
        } else if (env.localRank() < visible) {
            gpu = env.localRank();
        } else if (visible == 1) {
            gpu = 0;
        } else {
            throw new WorldSetupException(String.format(Locale.ROOT, "local rank %d has no GPU of its own: this "
                    + "process sees %d GPUs and %d processes run on this host. Start at most %d processes per host, "
                    + "or set %s (one GPU per process; %s=0,0 puts two on GPU 0)", env.localRank(), visible,
                    env.localWorldSize(), visible, WorldConfig.GPUS_ENV, WorldConfig.GPUS_ENV));
        }
        if (gpu >= visible) {
            throw new WorldSetupException(String.format(Locale.ROOT, "local rank %d needs GPU %d but this process sees "
                    + "%d GPU%s (CUDA_VISIBLE_DEVICES may hide the others)", env.localRank(), gpu, visible,
                    visible == 1 ? "" : "s"));
        }
        return gpu;
    }

    /**
     * Connects {@code rank} to every peer: maps each peer's heap by CUDA IPC and chooses the transport of the pair
     * ({@code auto}: the first in preference order that connects processes); publishes, on one all-gather, what the
     * chosen transports need the other processes to know ({@link TransportOffers}); then connects each pair with the
     * peer's offer, and applies {@link AtomicRouting} with what every process said about its ADDs.
     */
    private static void connect(Rank rank, List<PeerCard> cards, ProcessRoutes.Route[] routes, String transport,
                                List<TransportProvider> providers, Bootstrap bootstrap, IpcMemory[] mappings) {
        int n = routes.length;
        RemotePeer[] remotes = new RemotePeer[n];
        TransportProvider[] chosen = new TransportProvider[n];
        for (int p = 0; p < n; p++) {
            PeerCard peer = cards.get(p);
            if (routes[p] == ProcessRoutes.Route.SELF) {
                rank.setLink(p, new PeerLink(Transport.SELF, rank.heapBase(), 0, 0, 0, rank.abortFlagAddress(),
                        null));
                continue;
            }
            RemotePeer remote;
            String otherwise;
            if (routes[p] == ProcessRoutes.Route.OTHER_HOST) {
                // Nothing of it is mapped here. Its GPU is one of this machine's only where processes of one
                // machine count as hosts of their own (GDA4J_HOST_NAME): then the emulated NIC may reach it.
                remote = RemotePeer.onAnotherHost(p, peer.heapBytes(), nativeAtomicsTo(rank.device(), peer),
                        peer.heapHandle(), peer.describe());
                otherwise = ". Ranks of other hosts are reached through a NIC only; this host: "
                        + acrossHostsStatus(providers);
            } else {
                IpcMemory heap = rank.context().openIpcMemory(peer.heapHandle(), peer.heapBytes(),
                        peer.describe() + "'s heap");
                mappings[p] = heap;
                boolean sameGpu = routes[p] == ProcessRoutes.Route.IPC_SAME_GPU;
                remote = new RemotePeer(p, heap.address(), peer.heapBytes(), sameGpu,
                        sameGpu || nativeAtomicsTo(rank.device(), peer), peer.describe());
                otherwise = ", or drive every GPU from one JVM (LocalWorld), where every transport works";
            }
            remotes[p] = remote;
            RemotePeer asked = remote;
            try {
                chosen[p] = TransportChoice.choose(transport, providers, "rank " + rank.rank() + " to "
                        + peer.describe(), provider -> provider.unavailableAcrossProcesses(rank, asked),
                        "between these processes", otherwise);
            } catch (TransportSetupException e) {
                throw new WorldSetupException(e.getMessage(), e);
            }
        }
        Map<String, byte[]> offers = new LinkedHashMap<>();
        try {
            // Inside the try: an offer makes resources (QPs, over mlx5), and a later one may fail.
            for (TransportProvider p : providers) {
                if (Arrays.asList(chosen).contains(p)) {
                    List<RemotePeer> served = new ArrayList<>();
                    for (int q = 0; q < n; q++) {
                        if (chosen[q] == p) {
                            served.add(remotes[q]);
                        }
                    }
                    p.offerAcrossProcesses(rank, served).ifPresent(bytes -> offers.put(p.name(), bytes));
                }
            }
            long ownLoopback = loopbackOf(rank, providers);
            byte[][] published = bootstrap.allGather(new TransportOffers(rank.rank(), ownLoopback != 0, offers)
                    .encode());
            boolean[] nicAtomics = new boolean[n];
            for (int p = 0; p < n; p++) {
                TransportOffers theirs;
                try {
                    theirs = TransportOffers.decode(p, published[p]);
                } catch (TransportSetupException e) {
                    throw new WorldSetupException(e.getMessage(), e);
                }
                nicAtomics[p] = theirs.nicAtomics();
                if (chosen[p] != null) {
                    rank.setLink(p, chosen[p].connectAcrossProcesses(rank,
                            remotes[p].withOffer(theirs.offer(chosen[p].name()))));
                }
            }
            if (loopbackOf(rank, providers) != ownLoopback) {
                throw new IllegalStateException("rank " + rank.rank() + "'s loopback QP for its own ADDs changed while"
                        + " its links were connected: a transport must make it in offerAcrossProcesses");
            }
            AtomicRouting.applyAcrossProcesses(rank, ownLoopback, nicAtomics);
        } catch (RuntimeException e) {
            // Links made so far free the offers' resources when they close (create's caller closes them); a
            // transport that offered (or failed halfway through its offer) but got no link frees them here.
            for (TransportProvider p : providers) {
                if (Arrays.asList(chosen).contains(p)) {
                    LocalRanks.collect(e, () -> p.abandonAcrossProcesses(rank));
                }
            }
            throw e;
        }
    }

    /** What this host offers for reaching other hosts, as the transports that can leave it say (ibgda: RDMA). */
    private static String acrossHostsStatus(List<TransportProvider> providers) {
        List<String> said = new ArrayList<>();
        for (TransportProvider p : providers) {
            p.acrossHostsStatus().ifPresent(said::add);
        }
        return said.isEmpty() ? "no transport on the class path reaches other hosts" : String.join("; ", said);
    }

    /** Where {@code rank}'s own ADDs go ({@link TransportProvider#loopbackAtomicsQp}), 0 for GPU atomics. */
    private static long loopbackOf(Rank rank, List<TransportProvider> providers) {
        for (TransportProvider p : providers) {
            long qp = p.loopbackAtomicsQp(rank);
            if (qp != 0) {
                return qp;
            }
        }
        return 0;
    }

    /**
     * Whether this GPU's link to the peer's GPU carries atomics (the same GPU: yes). Only a GPU this process can see
     * can be asked; one hidden by CUDA_VISIBLE_DEVICES, or of another machine, is taken to have none, so ADDs to it
     * are refused rather than possibly lost.
     */
    private static boolean nativeAtomicsTo(CudaDevice mine, PeerCard peer) {
        for (int g = 0; g < Cuda.deviceCount(); g++) {
            CudaDevice d = Cuda.device(g);
            if (d.uuid().equals(peer.gpuUuid())) {
                return d.uuid().equals(mine.uuid()) || mine.nativeAtomicsWith(d);  // one GPU: its own atomics
            }
        }
        return false;
    }

    /**
     * Where this process's GPU addresses the heap of {@code peer}, a rank of another process (its CUDA IPC mapping):
     * for host-issued copies into it ({@code cuMemcpyDtoDAsync}), whatever transport the pair's kernels use (a proxy
     * link's peer entry carries no heap address).
     *
     * @throws IllegalArgumentException for a peer on another host: its heap is not mapped here (reach it with the
     *                                  device API, through the pair's transport)
     */
    public long peerHeapAddress(int peer) {
        LocalRanks.checkInWorld(peer, size());
        if (peer == rank.rank()) {
            return rank.heapBase();
        }
        if (mappings[peer] == null) {
            throw new IllegalArgumentException("rank " + peer + " runs on another host than rank " + rank.rank()
                    + ": its heap is not mapped here, so no host-issued copy reaches it; reach it with the device API"
                    + " (its transport: " + transport(rank.rank(), peer).label() + ")");
        }
        return mappings[peer].address();
    }

    /** The bootstrap this world was built on: a barrier and an all-gather of small byte arrays for the user. */
    public Bootstrap bootstrap() {
        return bootstrap;
    }

    /** Ranks of every process whose card names the GPU of {@code rank} (processes of one host sharing it). */
    @Override
    public int ranksOnGpuOf(int rank) {
        PeerCard mine = cards().get(rank(rank).rank());
        int n = 0;
        for (PeerCard c : cards()) {
            if (c.sameGpu(mine)) {
                n++;
            }
        }
        return n;
    }

    /** Every process's card, in rank order (host, GPU, pid: for messages and reports). */
    public List<PeerCard> cards() {
        return cards;
    }

    @Override
    public int size() {
        return cards.size();
    }

    @Override
    public List<Rank> localRanks() {
        return local.list();
    }

    @Override
    public Rank rank(int r) {
        if (r == rank.rank()) {
            return rank;
        }
        LocalRanks.checkInWorld(r, size());
        throw new IllegalArgumentException(cards.get(r).describe() + " runs in another process: this process drives "
                + "rank " + rank.rank() + " (World.localRanks())");
    }

    @Override
    public SymmetricHeap heap() {
        return heap;
    }

    @Override
    public WorldConfig config() {
        return config;
    }

    /**
     * The transport of a pair. For pairs from this process's rank, what its links use; for pairs between other
     * processes, what they chose by the same rule (the configured transport, or under {@code auto} the first that
     * connects the pair: one for processes of one host, another where the two are on different hosts), which is what
     * this rank uses towards a peer in the same relation to it. A rank reaches itself as SELF.
     */
    @Override
    public Transport transport(int from, int to) {
        LocalRanks.checkInWorld(from, size());
        LocalRanks.checkInWorld(to, size());
        if (from == to) {
            return Transport.SELF;
        }
        if (from == rank.rank()) {
            return rank.transportTo(to);
        }
        // Every process applies the same rule with the same transports, and the rule depends only on whether the two
        // share a host: the pair (from, to) uses what this rank uses towards a peer in the same relation to it.
        return rank.transportTo(ProcessRoutes.standIn(cards, rank.rank(), from, to));
    }

    /**
     * Throws a {@link RankDiedException} naming the first dead rank when the bootstrap found one (the device's
     * record, usually ERR_ABORTED, is attached); else the first device error of this rank, as
     * {@link World#checkErrors()}, after telling the other processes so that their kernels waiting for this rank stop
     * now; else, when a live peer announced that it stopped its kernels, a {@link DeviceErrorException} naming it.
     */
    @Override
    public void checkErrors() {
        PeerFailures.Failure dead = failures.first();
        ErrorRecord rec = rank.readErrorRecord();
        if (dead != null) {
            throw new RankDiedException(dead.rank(), cards.get(dead.rank()).describe() + " died or stopped answering ("
                    + dead.why() + "); rank " + rank.rank() + "'s kernels were stopped through its abort flag"
                    + (rec.isError() ? " (device record: " + rec.describe(config.waitTimeout()) + ")" : "")
                    + ". The world cannot continue: close it", rec.isError() ? rec : null);
        }
        if (rec.isError()) {
            announce("its kernels stopped: " + rec.describe(config.waitTimeout()));
            local.throwIfError(rec);
        }
        PeerFailures.Failure peerAbort = failures.firstAbort();
        if (peerAbort != null && rank.abortRaised()) {
            throw new DeviceErrorException(cards.get(peerAbort.rank()).describe() + " stopped its kernels ("
                    + peerAbort.why() + "), and rank " + rank.rank() + "'s were stopped through its abort flag so"
                    + " that none waits for it until the timeout. Fix that rank's error; clearErrors() in every"
                    + " process lets the world run again", null);
        }
        local.throwIfAborted();
    }

    /** Tells the other processes, once per error, that this rank's kernels stopped (see Bootstrap#announceAbort). */
    private synchronized void announce(String why) {
        if (!announced) {
            announced = true;
            bootstrap.announceAbort("rank " + rank.rank() + ": " + why);
        }
    }

    /** The first dead rank the bootstrap reported, if any. */
    public Optional<Integer> deadRank() {
        PeerFailures.Failure f = failures.first();
        return f == null ? Optional.empty() : Optional.of(f.rank());
    }

    /** Clears this process's error record and abort flag, and forgets the aborts peers announced; not a death. */
    @Override
    public void clearErrors() {
        if (failures.first() != null) {
            throw new IllegalStateException("rank " + failures.first().rank() + " died: a world with a dead rank "
                    + "cannot run again; close it");
        }
        local.clearErrors();
        failures.clearAborts();
        synchronized (this) {
            announced = false;
        }
    }

    /** Raises this process's abort flags and tells the other processes, whose kernels then stop too. */
    @Override
    public void abort() {
        local.abort();
        announce("World.abort() was called");
    }

    @Override
    public void barrier() {
        bootstrap.barrier();
    }

    @Override
    public byte[][] allGather(byte[] mine) {
        return bootstrap.allGather(mine);
    }

    @Override
    public void loadModules(ModuleImage... images) {
        local.loadModules(images);
    }

    /**
     * Stops this process's kernels, closes its links and unmaps its peers' heaps in step with the other processes (two
     * close barriers, skipped once a peer is dead), closes its rank, then leaves the bootstrap. A second call does
     * nothing.
     */
    @Override
    public void close() {
        local.closeWorld(this::releasePeers, bootstrap::close);
    }

    /** What this process holds of its peers, released before its rank closes: links, then the heap mappings. */
    private RuntimeException releasePeers(RuntimeException first) {
        // The links before the first barrier: a proxy link drains its channel, so the copies and signals its proxy
        // thread still had queued into a peer's heap complete here, before the peer may free that heap and before
        // the mapping they write through goes (cuIpcCloseMemHandle does not wait for work in flight).
        first = rank.closeLinks(first);
        first = meetPeers(first, "every process has stopped writing into its peers' heaps");
        boolean peerDied = failures.first() != null;
        for (IpcMemory m : mappings) {
            if (m == null) {
                continue;
            }
            if (peerDied) {
                // A dead exporter's memory may be gone already and the driver may refuse to unmap it; nothing here
                // uses it any more, so a failure to unmap it is not worth failing close for.
                try {
                    m.close();
                } catch (RuntimeException ignored) {
                    // best effort, see above
                }
            } else {
                first = LocalRanks.collect(first, m::close);
            }
        }
        first = meetPeers(first, "every process has unmapped its peers' heaps");
        // From here a peer found dead must not raise the abort word that the ranks free next.
        failures.stop();
        return first;
    }

    /** A close barrier, skipped once a peer is dead (the dead neither write nor map anything any more). */
    private RuntimeException meetPeers(RuntimeException first, String what) {
        if (failures.first() != null || bootstrap.failure() != null) {
            return first;
        }
        return LocalRanks.collect(first, () -> {
            try {
                bootstrap.barrier();
            } catch (PeerFailedException e) {
                // A peer died while we waited: it maps and writes nothing any more, so freeing is safe.
            } catch (BootstrapException e) {
                throw new IllegalStateException("closing the world: waiting until " + what + ": " + e.getMessage()
                        + "; freed anyway", e);
            }
        });
    }

    @Override
    public String toString() {
        return "ProcessWorld[rank " + rank.rank() + " of " + size() + ", " + rank + "]";
    }
}
