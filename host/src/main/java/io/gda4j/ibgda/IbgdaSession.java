package io.gda4j.ibgda;

import io.gda4j.cuda.CudaDevice;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.cuda.IpcMemory;
import io.gda4j.nic.MemoryKind;
import io.gda4j.nic.MemoryRegistration;
import io.gda4j.nic.Nic;
import io.gda4j.nic.NicAccess;
import io.gda4j.nic.NicCapabilities;
import io.gda4j.nic.NicConfig;
import io.gda4j.nic.NicException;
import io.gda4j.nic.NicMemory;
import io.gda4j.nic.NicQp;
import io.gda4j.nic.NicSetupCheck;
import io.gda4j.nic.NicUser;
import io.gda4j.nic.QpPair;
import io.gda4j.nic.QpRings;
import io.gda4j.nic.QpSpec;
import io.gda4j.nic.RcExchange;
import io.gda4j.nic.RingPlacement;
import io.gda4j.nic.emulated.RemoteResponder;
import io.gda4j.nic.emulated.SoftwareNic;
import io.gda4j.transport.LinkEnd;
import io.gda4j.transport.LinkHealth;
import io.gda4j.transport.PeerLink;
import io.gda4j.transport.RemotePeer;
import io.gda4j.transport.Transport;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * One world's IBGDA state: the NICs ({@link RankNics}: each rank's own, chosen by PCIe distance, or one shared),
 * each rank's heap registration and flush resources, and per pair of ranks {@code GDA4J_IBGDA_QPS_PER_PEER}
 * connected QP pairs (each pair's two QPs on the two ranks' NICs). The world connects ordered pairs one at a time
 * ({@code (a, b)} then later {@code (b, a)}); the pairs are made at the first of the two, and each side gets one
 * {@link DeviceQp} holding its QPs of them.
 *
 * <p>Across processes ({@code ProcessWorld}) each process has its own session and NIC for its one rank, and a pair
 * of ranks is connected by what each process offers ({@link #offerAcrossProcesses}, {@link #linkAcrossProcesses}):
 * over mlx5, one RC QP per side, created before the offers are published and connected to the QP number, PSN and
 * LID/GID the peer published ({@link RcExchange}, shared with the proxy's verbs handler); over the emulated NIC, a QP
 * toward a {@code RemoteResponder} that acts on the peer's IPC-mapped heap.
 *
 * <p>Closing: a world closes its ranks, and each rank its links. The first link to close quiesces the NIC (the
 * emulated engine stops and drains its streams) before any heap or context is freed; each link then frees its own QP
 * and DeviceQp; the last one frees the ranks' registrations and flush resources and closes the NICs.
 */
final class IbgdaSession {
    private final IbgdaConfig config;
    private final RankNics nics;
    private final Map<Integer, RankState> ranks = new HashMap<>();
    /** Per pair of ranks, its connections: {@code config.qpsPerPeer()} QP pairs, QP i of each side to QP i. */
    private final Map<Long, List<QpPair>> pairs = new HashMap<>();
    /** Across processes over a NIC that connects by QP number: each rank's QPs for its pairs, until links take them. */
    private final Map<Integer, RcExchange> exchanges = new HashMap<>();
    /** NICs whose loopback probe passed ({@link #checkNic}). */
    private final Set<Nic> probedNics = Collections.newSetFromMap(new IdentityHashMap<>());
    private int openLinks;
    private boolean quiesced;
    private boolean closed;

    /** A rank's NIC words: the flush flag, the discard scratch word, the atomic lock line (across processes). */
    static final int WORDS_BYTES = 64;
    static final int FLUSH_FLAG_OFFSET = 0;
    static final int SCRATCH_OFFSET = 8;
    static final int ATOMIC_LOCK_OFFSET = 16;

    /**
     * A rank's NIC and its registrations on it; its NIC words (64 bytes of GPU memory: the flush flag at 0, the
     * scratch word for discarded fetched values at 8); and its loopback QP, which carries the rank's own ADDs to its
     * heap (atomics on one word go through one path: {@link io.gda4j.world.AtomicRouting}) and, when the flush is
     * on, the PCIe flush.
     */
    private static final class RankState {
        Nic nic;
        boolean flushOnQuiet;
        NicMemory heap;
        DeviceMemory words;
        NicMemory flushFlagRegion;
        NicMemory scratchRegion;
        NicQp loopbackQp;
        DeviceQp loopbackDeviceQp;

        long discardAddr() {
            return scratchRegion == null ? 0 : scratchRegion.address();
        }

        int discardLkey() {
            return scratchRegion == null ? nic.nullMemory().lkey() : scratchRegion.lkey();
        }
    }

    IbgdaSession(IbgdaConfig config, RankNics nics) {
        this.config = config;
        this.nics = nics;
    }

    /** The NIC {@code rank} posts on, once it has a link. */
    Optional<Nic> nicOf(LinkEnd rank) {
        return nics.existing(rank);
    }

    /**
     * Whether quiet on {@code r}'s QPs, posted on {@code nic}, ends with the PCIe flush (after a get). Auto: where the
     * NIC's writes may pass their CQE, unless the GPU orders GPUDirect RDMA writes for its own kernels
     * ({@code CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING} at least OWNER; a real NIC's writes only: the
     * emulated NIC's are CUDA copies, about which the attribute says nothing).
     */
    private boolean flushOnQuiet(LinkEnd r, Nic nic) {
        return switch (config.flush()) {
            case ALWAYS -> true;
            case NEVER -> false;
            case AUTO -> nic.capabilities().writesMayPassCqe() && (!nic.capabilities().gpuDirectWrites()
                    || r.context().device().gpuDirectRdmaWritesOrdering()
                    < CudaDevice.GPU_DIRECT_RDMA_WRITES_ORDERING_OWNER);
        };
    }

    /** Whether quiet on {@code rank}'s QPs ends with the PCIe flush. */
    synchronized boolean flushOnQuietOf(LinkEnd rank) {
        RankState s = ranks.get(rank.rank());
        return s != null && s.flushOnQuiet;
    }

    /** One line: the flush and where discarded fetched values go for {@code r} (for labels and {@code info}). */
    synchronized String describeFetchedValues(LinkEnd r) {
        RankState s = ranks.get(r.rank());
        if (s == null) {
            return "rank " + r.rank() + " has no IBGDA links";
        }
        return (s.flushOnQuiet ? "quiet ends with a PCIe flush after a get" : "no PCIe flush on quiet")
                + "; discarded fetched values go to " + (s.scratchRegion == null ? "the null MR"
                : "an 8-byte scratch MR");
    }

    synchronized PeerLink link(LinkEnd local, LinkEnd peer) {
        if (closed) {
            throw new IllegalStateException("the IBGDA session of this world is closed");
        }
        int lo = Math.min(local.rank(), peer.rank());
        int hi = Math.max(local.rank(), peer.rank());
        long key = (long) lo << 32 | hi;
        RankState mine = rankState(local);
        RankState theirs = rankState(peer);
        List<QpPair> connections = pairs.get(key);
        if (connections == null) {
            LinkEnd first = local.rank() == lo ? local : peer;
            LinkEnd second = first == local ? peer : local;
            Nic firstNic = rankState(first).nic;
            Nic secondNic = rankState(second).nic;
            connections = new ArrayList<>();
            try {
                for (int i = 0; i < config.qpsPerPeer(); i++) {
                    connections.add(firstNic == secondNic
                            ? firstNic.createConnectedPair(spec(first, second.rank(), i), spec(second, first.rank(), i))
                            : QpPair.connect(firstNic, spec(first, second.rank(), i), secondNic,
                            spec(second, first.rank(), i)));
                }
            } catch (RuntimeException e) {
                for (QpPair made : connections) {
                    run(e::addSuppressed, made::close);
                }
                throw e;
            }
            pairs.put(key, connections);
        }
        List<NicQp> qps = new ArrayList<>();
        for (QpPair pair : connections) {
            qps.add(local.rank() == lo ? pair.first() : pair.second());
        }
        DeviceQp dqp = DeviceQp.create(local.context(), deviceRings(qps), new DeviceQp.Addressing(
                mine.heap.address(), theirs.heap.address(), local.heapSizeBytes(), mine.heap.lkey(),
                theirs.heap.rkey(), mine.flushOnQuiet ? mine.loopbackDeviceQp.address() : 0,
                mine.flushFlagRegion == null ? 0 : mine.flushFlagRegion.address(),
                mine.flushFlagRegion == null ? 0 : mine.flushFlagRegion.rkey(), mine.discardAddr(),
                mine.discardLkey(), mine.flushOnQuiet, theirs.heap.relaxedOrdering(), peer.rank()));
        openLinks++;
        AutoCloseable resources = new WithinProcess(mine, () -> closeLink(qps, dqp, () -> { }));
        return new PeerLink(Transport.IBGDA, 0, dqp.address(), theirs.heap.rkey(), mine.heap.lkey(), 0, resources);
    }

    /**
     * What {@code local}'s process tells the others so that they can reach its heap (see {@link ProcessOffer}): its
     * heap's key, address and rights, and what its kind of NIC needs.
     * <ul>
     *   <li>A NIC that connects by QP number (mlx5): one QP per other rank of the world, created now and published
     *       by endpoint ({@link RcExchange}), because the offers go round once and each side connects its QP of a
     *       pair to the QP the other side created. QPs of pairs another transport serves stay unconnected until the
     *       session closes.</li>
     *   <li>The emulated NIC: its heap's strict atomics take the lock line in its NIC words from now on, as every
     *       other process's atomics on it will: the emulated NICs of several processes are several engines, and a
     *       NIC's atomics must stay atomic with each other ({@link SoftwareNic#serializeAtomics}).</li>
     * </ul>
     * What this makes is freed by the links' closing, or by {@link #abandon()} when no link was made.
     */
    synchronized byte[] offerAcrossProcesses(LinkEnd local) {
        requireOpen();
        RankState s = rankState(local);
        if (!s.nic.capabilities().processLinks()) {
            RcExchange exchange = exchanges.get(local.rank());
            if (exchange == null) {
                exchange = RcExchange.open(s.nic, local.rank(), local.worldSize(), config.qpsPerPeer(),
                        (peer, index) -> spec(local, peer, index));
                exchanges.put(local.rank(), exchange);
            }
            return new ProcessOffer(s.heap.rkey(), s.heap.address(), local.heapSizeBytes(), s.heap.access(), 0,
                    new byte[ProcessOfferDescriptor.WORDS_HANDLE_BYTES], exchange.endpoints()).encode();
        }
        SoftwareNic emulated = processLinksOf(s, local);
        emulated.serializeAtomics(s.heap, s.words.address() + ATOMIC_LOCK_OFFSET);
        return new ProcessOffer(s.heap.rkey(), s.heap.address(), local.heapSizeBytes(), s.heap.access(),
                ATOMIC_LOCK_OFFSET, s.words.exportIpcHandle()).encode();
    }

    /**
     * The link from {@code local} to {@code peer}, a rank of another process. WQEs name the peer's own heap addresses
     * and rkey, as they go on the wire.
     * <ul>
     *   <li>Over a NIC that connects by QP number (mlx5): this side's QP of the pair, made in the offer phase, moved
     *       to RTR towards the QP number, PSN and LID/GID the peer published for this rank, then to RTS
     *       ({@link RcExchange#connect}). The peer's process connects its QP of the pair to this side's endpoint.</li>
     *   <li>Over the emulated NIC (one host): a QP whose engine here executes the WQEs on the peer's heap through its
     *       CUDA IPC mapping, checked against the peer's registration as the peer's NIC would
     *       ({@code RemoteResponder}), its strict atomics under the peer's lock line (mapped here by CUDA IPC).</li>
     * </ul>
     */
    synchronized PeerLink linkAcrossProcesses(LinkEnd local, RemotePeer peer) {
        requireOpen();
        byte[] published = peer.offer();
        if (published == null) {
            throw new IllegalStateException("ibgda: " + peer.description() + " published no ibgda offer, so its"
                    + " process connects to rank " + local.rank() + " over another transport: set the same "
                    + "GDA4J_TRANSPORT in every process of the job");
        }
        ProcessOffer offer = ProcessOffer.decode(peer.description(), published);
        if (offer.heapBytes() != peer.heapBytes()) {
            throw new IllegalStateException("ibgda: " + peer.description() + " offers a heap of " + offer.heapBytes()
                    + " bytes but its card says " + peer.heapBytes());
        }
        RankState mine = rankState(local);
        boolean byEndpoint = !mine.nic.capabilities().processLinks();
        if (byEndpoint == offer.endpoints().isEmpty()) {
            throw new IllegalStateException("ibgda: rank " + local.rank() + " posts on " + mine.nic.description()
                    + (byEndpoint ? ", which connects by QP number, but " + peer.description() + " offers no RC"
                    + " endpoints (its process uses the emulated NIC)" : ", but " + peer.description() + " offers RC"
                    + " endpoints (its process uses a NIC that connects by QP number)") + ": set the same "
                    + NicConfig.NIC_ENV + " in every process of the job");
        }
        IpcMemory words = null;
        IpcMemory peerHeap = null;  // the emulated NIC's wire to a rank of another host (a named host of this machine)
        RemoteResponder responder = null;
        List<NicQp> qps = new ArrayList<>();
        DeviceQp dqp = null;
        try {
            if (byEndpoint) {
                RcExchange exchange = exchanges.get(local.rank());
                if (exchange == null) {
                    throw new IllegalStateException("ibgda: rank " + local.rank() + " connects to "
                            + peer.description() + " before it offered anything (offerAcrossProcesses)");
                }
                for (int i = 0; i < config.qpsPerPeer(); i++) {
                    qps.add(exchange.connect(peer.rank(), i, peer.description(), offer.endpoints()));
                }
            } else {
                SoftwareNic emulated = processLinksOf(mine, local);
                words = local.context().openIpcMemory(offer.wordsHandle(), WORDS_BYTES, peer.description()
                        + "'s NIC words");
                long wire = peer.heapAddress();
                if (!peer.sameHost()) {
                    peerHeap = local.context().openIpcMemory(peer.heapHandle(), peer.heapBytes(),
                            peer.description() + "'s heap (the emulated NIC's wire to another host)");
                    wire = peerHeap.address();
                }
                responder = new RemoteResponder(peer.description());
                responder.addRegion(offer.heapRkey(), offer.heapAddress(), offer.heapBytes(), offer.heapAccess(),
                        wire, words.address() + offer.lockOffset(), "heap");
                for (int i = 0; i < config.qpsPerPeer(); i++) {
                    qps.add(emulated.createQpToProcess(spec(local, peer.rank(), i), responder));
                }
            }
            dqp = DeviceQp.create(local.context(), deviceRings(qps), new DeviceQp.Addressing(
                    mine.heap.address(), offer.heapAddress(), local.heapSizeBytes(), mine.heap.lkey(),
                    offer.heapRkey(), mine.flushOnQuiet ? mine.loopbackDeviceQp.address() : 0,
                    mine.flushFlagRegion == null ? 0 : mine.flushFlagRegion.address(),
                    mine.flushFlagRegion == null ? 0 : mine.flushFlagRegion.rkey(), mine.discardAddr(),
                    mine.discardLkey(), mine.flushOnQuiet,
                    offer.heapAccess().contains(NicAccess.RELAXED_ORDERING), peer.rank()));
        } catch (RuntimeException e) {
            for (NicQp qp : qps) {
                run(e::addSuppressed, qp::close);
            }
            if (responder != null) {
                responder.close();
            }
            if (words != null) {
                words.close();
            }
            if (peerHeap != null) {
                peerHeap.close();
            }
            throw e;
        }
        openLinks++;
        List<NicQp> linkQps = List.copyOf(qps);
        DeviceQp linkDqp = dqp;
        RemoteResponder linkResponder = responder;
        IpcMemory linkWords = words;
        IpcMemory linkPeerHeap = peerHeap;
        AcrossProcesses resources = new AcrossProcesses(mine, local.rank(), () -> {
            if (linkResponder != null) {
                linkResponder.close();
            }
            closeLink(linkQps, linkDqp, () -> {
                try {
                    if (linkWords != null) {
                        linkWords.close();
                    }
                } finally {
                    if (linkPeerHeap != null) {
                        linkPeerHeap.close();
                    }
                }
            });
        });
        return new PeerLink(Transport.IBGDA, 0, dqp.address(), offer.heapRkey(), mine.heap.lkey(), 0, resources);
    }

    /**
     * An ibgda link to another process: closing it closes the QP and unmaps the peer's NIC words; its health says
     * whether atomics on this rank's memory ever took the emulated NIC's atomic lock by force (a holder never
     * released it; nothing takes that lock over a NIC that connects by QP number, so the word stays 0 there).
     */
    private static final class AcrossProcesses extends WithinProcess implements LinkHealth {
        private final int rank;

        AcrossProcesses(RankState mine, int rank, Runnable close) {
            super(mine, close);
            this.rank = rank;
        }

        @Override
        public Optional<String> problem() {
            try {
                long broken = mine.words.readLong(ATOMIC_LOCK_OFFSET + SoftwareNic.ATOMIC_LOCK_BROKEN_OFFSET);
                return broken == 0 ? Optional.empty() : Optional.of("emulated NIC atomics on rank " + rank + "'s heap"
                        + " took its atomic lock by force " + broken + " time(s) after a holder did not release it for "
                        + "2 s (a process killed inside an atomic): counters on that heap may have lost updates");
            } catch (RuntimeException e) {
                return Optional.empty(); // the words are gone (closing); nothing to report
            }
        }
    }

    /** An ibgda link within this process: closing it closes its QP. */
    private static class WithinProcess implements AutoCloseable, NicUser {
        final RankState mine;
        private final Runnable close;

        WithinProcess(RankState mine, Runnable close) {
            this.mine = mine;
            this.close = close;
        }

        @Override
        public Optional<Nic> nic() {
            return Optional.of(mine.nic);
        }

        @Override
        public void close() {
            close.run();
        }
    }

    /** Frees everything {@link #offerAcrossProcesses} made when the world failed before any link was connected. */
    synchronized void abandon() {
        if (openLinks == 0 && !closed) {
            List<RuntimeException> failures = new ArrayList<>();
            closeAll(failures);
            if (!failures.isEmpty()) {
                RuntimeException first = failures.get(0);
                failures.subList(1, failures.size()).forEach(first::addSuppressed);
                throw first;
            }
        }
    }

    /**
     * {@code s}'s NIC, which must connect QPs to other processes ({@link NicCapabilities#processLinks()}). The calls
     * that do it (a QP to a {@link RemoteResponder}, atomics under a lock line) are the emulated NIC's own API: it is
     * the one NIC that states the capability.
     */
    private static SoftwareNic processLinksOf(RankState s, LinkEnd r) {
        return s.nic.facet(SoftwareNic.class).filter(n -> s.nic.capabilities().processLinks())
                .orElseThrow(() -> new IllegalStateException("ibgda across processes needs the emulated NIC; rank "
                        + r.rank() + " posts on " + s.nic.description()));
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the IBGDA session of this world is closed");
        }
    }

    /** The GPU address of {@code rank}'s loopback DeviceQp (its own ADDs), or 0 when it has no IBGDA link. */
    synchronized long loopbackAtomicsQp(LinkEnd rank) {
        RankState s = ranks.get(rank.rank());
        return s == null || s.loopbackDeviceQp == null ? 0 : s.loopbackDeviceQp.address();
    }

    /** The spec of QP {@code index} of {@code poster}'s QPs toward {@code target}. */
    private QpSpec spec(LinkEnd poster, int target, int index) {
        return new QpSpec(poster.context(), config.sqWqebbs(), config.sqWqebbs(), QpSpec.DEFAULT_MAX_INLINE_BYTES,
                "rank " + poster.rank() + " -> rank " + target + (config.qpsPerPeer() > 1 ? " QP " + index : ""))
                .withRings(config.rings());
    }

    private static List<QpRings> deviceRings(List<NicQp> qps) {
        List<QpRings> rings = new ArrayList<>();
        for (NicQp qp : qps) {
            rings.add(qp.deviceRings());
        }
        return rings;
    }

    private RankState rankState(LinkEnd r) {
        RankState s = ranks.get(r.rank());
        if (s != null) {
            return s;
        }
        s = new RankState();
        s.nic = nics.of(r);
        checkNic(s.nic, "ibgda rank " + r.rank());
        s.flushOnQuiet = flushOnQuiet(r, s.nic);
        Nic nic = s.nic;
        ranks.put(r.rank(), s);
        s.heap = nic.registerMemory(MemoryRegistration.deviceHeap(r.context(), r.heapBase(), r.heapSizeBytes(),
                "rank " + r.rank() + " heap"));
        s.words = r.context().allocate(WORDS_BYTES);
        s.words.fill((byte) 0);
        // The null MR drops fetched values without a PCIe write; it is needed only with the flush, and not every NIC
        // has one (ibv_alloc_null_mr): elsewhere they land in a scratch word nobody reads.
        if (!(s.flushOnQuiet && nic.capabilities().nullMemory())) {
            s.scratchRegion = nic.registerMemory(new MemoryRegistration(r.context(), s.words.address() + SCRATCH_OFFSET, 8,
                    MemoryKind.DEVICE, EnumSet.of(NicAccess.LOCAL_WRITE), "rank " + r.rank() + " discard scratch"));
        }
        if (s.flushOnQuiet) {
            s.flushFlagRegion = nic.registerMemory(new MemoryRegistration(r.context(), s.words.address() + FLUSH_FLAG_OFFSET, 8,
                    MemoryKind.DEVICE, EnumSet.of(NicAccess.LOCAL_WRITE, NicAccess.REMOTE_ATOMIC),
                    "rank " + r.rank() + " flush flag"));
        }
        // Its IBGDA peers add to its words with NIC atomics, so its own ADDs must be NIC atomics too: ATOMIC_FAs on
        // this QP, which targets the rank's own heap (local and remote base are both its heap).
        s.loopbackQp = nic.createLoopbackQp(new QpSpec(r.context(), config.sqWqebbs(), config.sqWqebbs(),
                QpSpec.DEFAULT_MAX_INLINE_BYTES, "rank " + r.rank() + " loopback (own ADDs, PCIe flush)")
                .withRings(config.rings()));
        s.loopbackDeviceQp = DeviceQp.create(r.context(), s.loopbackQp.deviceRings(), new DeviceQp.Addressing(
                s.heap.address(), s.heap.address(), r.heapSizeBytes(), s.heap.lkey(), s.heap.rkey(), 0, 0, 0,
                s.discardAddr(), s.discardLkey(), false, s.heap.relaxedOrdering(), r.rank()));
        return s;
    }

    /**
     * Refuses, before anything is registered, a NIC without what every rank needs: 8-byte atomics (ADD signals,
     * atomic_add, the flush) and a loopback RC connection (the flush and the rank's own ADDs ride one), probed once
     * per NIC on a real NIC (the emulated NIC always connects to itself).
     */
    private void checkNic(Nic nic, String who) {
        NicSetupCheck.requireAtomics(nic, who);
        if (config.rings() == RingPlacement.GPU && nic.gpuRingsUnsupportedReason().isPresent()) {
            throw new NicException(who + ": " + IbgdaConfig.RINGS_ENV + "=gpu, but " + nic.description() + " cannot"
                    + " keep QP rings in GPU memory: " + nic.gpuRingsUnsupportedReason().get() + "; use "
                    + IbgdaConfig.RINGS_ENV + "=host");
        }
        if (!nic.isEmulated() && probedNics.add(nic)) {
            try (Memory words = new Memory(NicSetupCheck.PROBE_BYTES)) {
                NicSetupCheck.probeLoopback(nic, Pointer.nativeValue(words), who, NicSetupCheck.PROBE_TIMEOUT_NANOS);
            }
        }
    }

    /** Closes one link's QPs and DeviceQp, then {@code after} (what else the link holds), once the NIC is quiet. */
    private synchronized void closeLink(List<NicQp> qps, DeviceQp dqp, Runnable after) {
        List<RuntimeException> failures = new ArrayList<>();
        if (!quiesced) {
            quiesced = true;
            for (Nic nic : nics.opened()) {
                run(failures, nic::quiesce);
            }
        }
        for (NicQp qp : qps) {
            run(failures, qp::close);
        }
        run(failures, dqp::close);
        run(failures, after);
        if (--openLinks == 0) {
            closeAll(failures);
        }
        if (!failures.isEmpty()) {
            RuntimeException first = failures.get(0);
            failures.subList(1, failures.size()).forEach(first::addSuppressed);
            throw first;
        }
    }

    private void closeAll(List<RuntimeException> failures) {
        closed = true;
        // QPs of the pairs no link took (another transport serves them, or the world failed first), before the NICs.
        for (RcExchange x : exchanges.values()) {
            run(failures, x::close);
        }
        exchanges.clear();
        for (List<QpPair> connections : pairs.values()) {
            for (QpPair p : connections) {
                run(failures, p::close);
            }
        }
        pairs.clear();
        for (RankState s : ranks.values()) {
            if (s.loopbackDeviceQp != null) {
                run(failures, s.loopbackDeviceQp::close);
            }
            if (s.loopbackQp != null) {
                run(failures, s.loopbackQp::close);
            }
            if (s.flushFlagRegion != null) {
                run(failures, s.flushFlagRegion::close);
            }
            if (s.scratchRegion != null) {
                run(failures, s.scratchRegion::close);
            }
            run(failures, s.words::close);
            run(failures, s.heap::close);
        }
        ranks.clear();
        nics.close(failures);
        IbgdaTransport.forget(this);
    }

    private static void run(List<RuntimeException> failures, Runnable step) {
        run(failures::add, step);
    }

    private static void run(java.util.function.Consumer<RuntimeException> failures, Runnable step) {
        try {
            step.run();
        } catch (RuntimeException e) {
            failures.accept(e);
        }
    }
}
