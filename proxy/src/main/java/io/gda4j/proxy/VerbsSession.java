package io.gda4j.proxy;

import io.gda4j.cuda.CudaContext;
import io.gda4j.nic.MemoryKind;
import io.gda4j.nic.MemoryRegistration;
import io.gda4j.nic.Nic;
import io.gda4j.nic.NicAccess;
import io.gda4j.nic.NicMemory;
import io.gda4j.nic.NicQp;
import io.gda4j.nic.QpPair;
import io.gda4j.nic.QpSpec;
import io.gda4j.nic.RcExchange;
import io.gda4j.nic.emulated.RemoteResponder;
import io.gda4j.nic.emulated.SoftwareNic;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The verbs handler's set-up on one NIC: each rank's heap registered once (not per link, not per message), and for
 * each pair of ranks a connected QP pair and a credit block on each side ({@link CreditBlockDescriptor}) registered
 * for remote writes. Ranks of one process share the NIC; {@link #connect} returns both directions' {@link VerbsLink}s.
 *
 * <p>Across processes: each process has its own session and NIC for its rank. {@link #offerAcrossProcesses}
 * registers what the other processes need (the credit blocks, one per rank of the world) and describes it in a
 * {@link VerbsOffer}, which the world publishes; {@link #connectAcrossProcesses} takes a peer's offer. How depends on
 * the NIC, as for ibgda:
 * <ul>
 *   <li>a NIC that connects by QP number (mlx5): the offer phase creates one RC QP per other rank and publishes its
 *       endpoint ({@link RcExchange}, shared with ibgda); connecting moves this side's QP of the pair to RTR towards
 *       the QP number, PSN and LID/GID the peer published for this rank. The proxy thread posts its direction on that
 *       QP, and the NIC answers the peer's WRITEs (data, credit reports) and atomics on it: the one RC connection
 *       carries both directions, as the pair {@link #connect} makes within a process. Credit blocks are plain
 *       registered host memory, written by the peer's NIC by rkey;</li>
 *   <li>the emulated NIC (one host): the offer also lends the heap's atomic lock line and the credit blocks as
 *       memory another process maps; connecting makes this side's direction only, a QP toward a
 *       {@link RemoteResponder} that checks keys and ranges against the peer's registrations as the peer's NIC would,
 *       and acts on the peer's heap and credit blocks through their mappings in this process. The peer's process
 *       makes the other direction from this process's offer.</li>
 * </ul>
 *
 * <p>Closing deregisters and destroys in reverse order of creation; the NIC itself belongs to the caller.
 */
public final class VerbsSession implements AutoCloseable {
    /** Host memory for credit blocks: pinned and mapped into the GPU on a GPU machine, plain in CPU tests. */
    public interface WordMemory extends AutoCloseable {
        long address();

        /** A view of the whole block. */
        ByteBuffer buffer();

        @Override
        void close();
    }

    /** Allocates zeroed {@link WordMemory} of {@code bytes}. */
    @FunctionalInterface
    public interface WordAllocator {
        WordMemory allocate(int bytes);
    }

    /** A registered heap. */
    private record Heap(long address, long bytes, NicMemory registration) {
    }

    /** What a rank of this process lent the other processes: its offer, and its credit blocks as it reads them. */
    private record Offered(VerbsOffer offer, ByteBuffer credits) {
    }

    private final Nic nic;
    private final WordAllocator words;
    private final int sqWqebbs;
    private final CrossProcessMemory creditMemory;
    private final CrossProcessMemory lockMemory;
    private final Map<Integer, Heap> heaps = new HashMap<>();
    private final Map<Integer, Offered> offered = new HashMap<>();
    /** Responders of this process's links to other processes, by {@link #pairKey}. */
    private final Map<Long, RemoteResponder> responders = new HashMap<>();
    /** Over a NIC that connects by QP number: each offered rank's QPs for its pairs, until links take them. */
    private final Map<Integer, RcExchange> exchanges = new HashMap<>();
    private final List<AutoCloseable> owned = new ArrayList<>();
    private NicMemory fetchRegion;
    private boolean closed;

    /**
     * @param sqWqebbs send-queue size of each QP (a power of two); every message takes at most three WQEBBs with its
     *                 credit traffic, so a queue of {@code 4 * window} never makes the proxy wait for a slot
     */
    public VerbsSession(Nic nic, WordAllocator words, int sqWqebbs) {
        this(nic, words, sqWqebbs, null, null);
    }

    /**
     * A session that also connects ranks of other processes.
     *
     * @param creditMemory how credit blocks are lent to the other processes and theirs mapped here
     * @param lockMemory   the same for the heaps' atomic lock lines
     */
    public VerbsSession(Nic nic, WordAllocator words, int sqWqebbs, CrossProcessMemory creditMemory,
                        CrossProcessMemory lockMemory) {
        this.nic = nic;
        this.words = words;
        this.sqWqebbs = sqWqebbs;
        this.creditMemory = creditMemory;
        this.lockMemory = lockMemory;
    }

    public Nic nic() {
        return nic;
    }

    /**
     * Registers {@code rank}'s heap with the NIC, once: a second call for the same rank returns at once (and must
     * name the same memory).
     */
    public synchronized void registerHeap(int rank, CudaContext owner, long address, long bytes, MemoryKind kind) {
        requireOpen();
        Heap known = heaps.get(rank);
        if (known != null) {
            if (known.address() != address || known.bytes() != bytes) {
                throw new IllegalArgumentException("rank " + rank + "'s heap is registered at 0x"
                        + Long.toHexString(known.address()) + " +" + known.bytes() + ", not 0x"
                        + Long.toHexString(address) + " +" + bytes);
            }
            return;
        }
        NicMemory m = nic.registerMemory(new MemoryRegistration(owner, address, bytes, kind, NicAccess.HEAP,
                "rank " + rank + " heap"));
        owned.add(m);
        heaps.put(rank, new Heap(address, bytes, m));
    }

    /** How many heap registrations this session made (one per rank). */
    public synchronized int heapRegistrations() {
        return heaps.size();
    }

    /** The registration of {@code rank}'s heap (for tests that close it to play a dead peer). */
    public synchronized NicMemory heapRegistration(int rank) {
        return heap(rank).registration();
    }

    /**
     * Connects ranks {@code a} and {@code b} (both registered): a QP each way and a credit block on each side.
     *
     * @param aGpu the context of {@code a}'s GPU, which the emulated NIC executes {@code a}'s QP on (null in CPU tests)
     * @param bGpu the same for {@code b}
     * @return {@code [a -> b, b -> a]}
     */
    public synchronized VerbsLink[] connect(int a, CudaContext aGpu, String aDescription, int b, CudaContext bGpu,
                                            String bDescription) {
        requireOpen();
        Heap ha = heap(a);
        Heap hb = heap(b);
        List<AutoCloseable> made = new ArrayList<>();
        try {
            WordMemory ca = add(made, words.allocate(CreditBlockDescriptor.LENGTH));
            WordMemory cb = add(made, words.allocate(CreditBlockDescriptor.LENGTH));
            Set<NicAccess> creditAccess = Set.of(NicAccess.LOCAL_WRITE, NicAccess.REMOTE_WRITE);
            NicMemory ra = add(made, nic.registerMemory(new MemoryRegistration(null, ca.address(),
                    CreditBlockDescriptor.LENGTH, MemoryKind.HOST_MAPPED, creditAccess, "rank " + a + " credits for " + b)));
            NicMemory rb = add(made, nic.registerMemory(new MemoryRegistration(null, cb.address(),
                    CreditBlockDescriptor.LENGTH, MemoryKind.HOST_MAPPED, creditAccess, "rank " + b + " credits for " + a)));
            QpPair qps = add(made, nic.createConnectedPair(QpSpec.of(aGpu, sqWqebbs, "proxy rank " + a + " -> rank " + b),
                    QpSpec.of(bGpu, sqWqebbs, "proxy rank " + b + " -> rank " + a)));
            NicMemory fetch = fetchRegion();
            long bytes = Math.min(ha.bytes(), hb.bytes());
            boolean relaxed = nic.capabilities().relaxedOrdering();
            VerbsLink ab = new VerbsLink(a, b, bDescription, qps.first().hostPoster(), ha.address(),
                    ha.registration().lkey(), hb.address(), hb.registration().rkey(), bytes,
                    fetch.isNull() ? 0 : fetch.address(), fetch.lkey(), relaxed, ca.buffer(), rb.address(), rb.rkey());
            VerbsLink ba = new VerbsLink(b, a, aDescription, qps.second().hostPoster(), hb.address(),
                    hb.registration().lkey(), ha.address(), ha.registration().rkey(), bytes,
                    fetch.isNull() ? 0 : fetch.address(), fetch.lkey(), relaxed, cb.buffer(), ra.address(), ra.rkey());
            owned.addAll(made);
            return new VerbsLink[] {ab, ba};
        } catch (RuntimeException e) {
            closeAll(made, e);
            throw e;
        }
    }

    /**
     * What {@code rank} (registered here) lends the ranks of other processes, for the world to publish: its heap's
     * registration, and its credit blocks, one per rank of a world of {@code worldSize}, registered once for remote
     * writes. Over a NIC that connects by QP number, also a QP for each pair, in RESET, and its endpoint
     * ({@link RcExchange}); over the emulated NIC, the credit blocks are lent as memory other processes map, and the
     * heap's atomics take its lock line from now on, as every other process's NIC atomics on it will
     * ({@code SoftwareNic.serializeAtomics}): several processes are several engines. A second call returns the same
     * offer.
     */
    public synchronized VerbsOffer offerAcrossProcesses(int rank, int worldSize) {
        requireOpen();
        Offered known = offered.get(rank);
        if (known != null) {
            if (known.offer().creditBlocks() != worldSize) {
                throw new IllegalArgumentException("rank " + rank + " offered credit blocks for a world of "
                        + known.offer().creditBlocks() + " ranks, not " + worldSize);
            }
            return known.offer();
        }
        Heap h = heap(rank);
        if (!nic.capabilities().processLinks()) {
            return offerEndpoints(rank, worldSize, h);
        }
        SoftwareNic emulated = processLinks();
        List<AutoCloseable> made = new ArrayList<>();
        try {
            int bytes = Math.multiplyExact(worldSize, CreditBlockDescriptor.LENGTH);
            String label = "rank " + rank + " credit blocks";
            CrossProcessMemory.Exported credits = add(made, creditMemory.export(bytes, label));
            NicMemory creditsRegistration = add(made, nic.registerMemory(new MemoryRegistration(null,
                    credits.address(), bytes, MemoryKind.HOST_MAPPED, Set.of(NicAccess.LOCAL_WRITE,
                    NicAccess.REMOTE_WRITE), label)));
            CrossProcessMemory.Exported lock = add(made, lockMemory.export(SoftwareNic.ATOMIC_LOCK_BYTES,
                    "rank " + rank + " heap atomic lock"));
            emulated.serializeAtomics(h.registration(), lock.address());
            VerbsOffer offer = new VerbsOffer(h.registration().rkey(), h.address(), h.bytes(),
                    h.registration().access(), creditsRegistration.rkey(), credits.address(), worldSize,
                    credits.handle(), lock.handle());
            owned.addAll(made);
            offered.put(rank, new Offered(offer, credits.buffer()));
            return offer;
        } catch (RuntimeException e) {
            closeAll(made, e);
            throw e;
        }
    }

    /**
     * The offer over a NIC that connects by QP number: credit blocks in registered host memory of this process
     * (the peer's NIC writes them by rkey), and a QP per pair, whose endpoints the offer carries.
     */
    private VerbsOffer offerEndpoints(int rank, int worldSize, Heap h) {
        List<AutoCloseable> made = new ArrayList<>();
        try {
            int bytes = Math.multiplyExact(worldSize, CreditBlockDescriptor.LENGTH);
            String label = "rank " + rank + " credit blocks";
            WordMemory credits = add(made, words.allocate(bytes));
            NicMemory creditsRegistration = add(made, nic.registerMemory(new MemoryRegistration(null,
                    credits.address(), bytes, MemoryKind.HOST_MAPPED, Set.of(NicAccess.LOCAL_WRITE,
                    NicAccess.REMOTE_WRITE), label)));
            // The proxy thread posts from the host: the rings need no GPU mapping.
            RcExchange exchange = add(made, RcExchange.open(nic, rank, worldSize, peer -> QpSpec.of(null, sqWqebbs,
                    "proxy rank " + rank + " -> rank " + peer)));
            VerbsOffer offer = new VerbsOffer(h.registration().rkey(), h.address(), h.bytes(),
                    h.registration().access(), creditsRegistration.rkey(), credits.address(), worldSize, new byte[0],
                    new byte[0], exchange.endpoints());
            owned.addAll(made);
            exchanges.put(rank, exchange);
            offered.put(rank, new Offered(offer, credits.buffer()));
            return offer;
        } catch (RuntimeException e) {
            closeAll(made, e);
            throw e;
        }
    }

    /**
     * The link from {@code local} (offered here) to {@code peerRank}, a rank of another process that published
     * {@code offer}, with the peer's keys and addresses as the peer's process made them (as on the wire). Over a NIC
     * that connects by QP number: this side's QP of the pair connected to the endpoint the peer published for
     * {@code local} ({@link RcExchange#connect}). Over the emulated NIC: a QP whose responder checks keys and ranges
     * as the peer's NIC would, reaching its heap through {@code peerHeapMapping} and its credit blocks and lock line
     * through their mappings here.
     *
     * @param gpu             the context the emulated NIC executes the QP on (null in CPU tests)
     * @param peerHeapMapping where this process reaches the peer's heap (the world's CUDA IPC mapping; the emulated
     *                        NIC only)
     * @param peerHeapBytes   the peer's heap size as the world knows it; the offer must have registered all of it
     * @throws ProxyException naming the peer when its offer does not fit this world, or its memory cannot be mapped
     */
    public synchronized VerbsLink connectAcrossProcesses(int local, CudaContext gpu, int peerRank,
                                                         String peerDescription, long peerHeapMapping,
                                                         long peerHeapBytes, VerbsOffer offer) {
        requireOpen();
        Offered mine = offered.get(local);
        if (mine == null) {
            throw new IllegalStateException("rank " + local + " connects to " + peerDescription + " before it offered"
                    + " anything (offerAcrossProcesses)");
        }
        if (offer.heapBytes() != peerHeapBytes) {
            throw new ProxyException(peerDescription + " offers a heap registration of " + offer.heapBytes()
                    + " bytes, but its heap has " + peerHeapBytes + ": every process of a job must run the same gda4j"
                    + " version and heap size");
        }
        if (offer.creditBlocks() != mine.offer().creditBlocks() || peerRank < 0 || peerRank >= offer.creditBlocks()
                || peerRank == local) {
            throw new ProxyException(peerDescription + " (rank " + peerRank + ") offers credit blocks for a world of "
                    + offer.creditBlocks() + " ranks, and rank " + local + " is in a world of "
                    + mine.offer().creditBlocks() + ": the processes do not describe one world");
        }
        boolean byEndpoint = !nic.capabilities().processLinks();
        if (byEndpoint == offer.endpoints().isEmpty()) {
            throw new ProxyException("rank " + local + " posts on " + nic.description() + (byEndpoint
                    ? ", which connects by QP number, but " + peerDescription + " offers no RC endpoints (its process"
                    + " uses the emulated NIC)" : ", but " + peerDescription + " offers RC endpoints (its process uses"
                    + " a NIC that connects by QP number)") + ": set the same GDA4J_NIC in every process of the job");
        }
        long key = pairKey(local, peerRank);
        if (responders.containsKey(key)) {
            throw new IllegalStateException("rank " + local + " is connected to " + peerDescription + " already");
        }
        Heap h = heap(local);
        List<AutoCloseable> made = new ArrayList<>();
        try {
            NicQp qp;
            RemoteResponder responder = null;
            if (byEndpoint) {
                qp = add(made, exchanges.get(local).connect(peerRank, peerDescription, offer.endpoints()));
            } else {
                SoftwareNic emulated = processLinks();
                CrossProcessMemory.Opened peerCredits = add(made, creditMemory.open(offer.creditsHandle(),
                        offer.creditsBytes(), peerDescription + "'s credit blocks"));
                CrossProcessMemory.Opened peerLock = add(made, lockMemory.open(offer.lockHandle(),
                        SoftwareNic.ATOMIC_LOCK_BYTES, peerDescription + "'s heap atomic lock"));
                responder = add(made, new RemoteResponder(peerDescription));
                responder.addRegion(offer.heapRkey(), offer.heapAddress(), offer.heapBytes(), offer.heapAccess(),
                        peerHeapMapping, peerLock.address(), "heap");
                responder.addRegion(offer.creditsRkey(), offer.creditsAddress(), offer.creditsBytes(),
                        Set.of(NicAccess.REMOTE_WRITE), peerCredits.address(), 0, "credit blocks");
                qp = add(made, emulated.createQpToProcess(QpSpec.of(gpu, sqWqebbs, "proxy rank " + local
                        + " -> rank " + peerRank), responder));
            }
            NicMemory fetch = fetchRegion();
            ByteBuffer localCredits = mine.credits().slice(peerRank * CreditBlockDescriptor.LENGTH,
                    CreditBlockDescriptor.LENGTH);
            VerbsLink link = new VerbsLink(local, peerRank, peerDescription, qp.hostPoster(), h.address(),
                    h.registration().lkey(), offer.heapAddress(), offer.heapRkey(), Math.min(h.bytes(),
                    offer.heapBytes()), fetch.isNull() ? 0 : fetch.address(), fetch.lkey(),
                    offer.heapAccess().contains(NicAccess.RELAXED_ORDERING), localCredits,
                    offer.creditBlockFor(local), offer.creditsRkey());
            owned.addAll(made);
            if (responder != null) {
                responders.put(key, responder);
            }
            return link;
        } catch (RuntimeException e) {
            closeAll(made, e);
            throw e;
        }
    }

    /**
     * The responder of {@code local}'s link to {@code peer} in another process; closing it makes that peer
     * unreachable, as a peer whose NIC went away is (for tests).
     */
    synchronized RemoteResponder responder(int local, int peer) {
        RemoteResponder r = responders.get(pairKey(local, peer));
        if (r == null) {
            throw new IllegalStateException("rank " + local + " has no link to rank " + peer + " of another process");
        }
        return r;
    }

    /**
     * This session's NIC, which connects QPs to other processes without QP numbers (the emulated NIC's own API does
     * it), with the memory this session lends to them.
     */
    private SoftwareNic processLinks() {
        if (creditMemory == null || lockMemory == null) {
            throw new IllegalStateException("over the emulated NIC this verbs proxy session connects ranks of one"
                    + " process only: it was made without memory to lend to other processes");
        }
        return nic.facet(SoftwareNic.class).filter(n -> nic.capabilities().processLinks())
                .orElseThrow(() -> new IllegalStateException("only the emulated NIC connects processes through mapped"
                        + " memory; this session posts on " + nic.description() + ", which connects them by RC"
                        + " endpoint"));
    }

    private static long pairKey(int from, int to) {
        return (long) from << 32 | (to & 0xffffffffL);
    }

    private static void closeAll(List<AutoCloseable> made, RuntimeException failure) {
        for (int i = made.size() - 1; i >= 0; i--) {
            try {
                made.get(i).close();
            } catch (Exception suppressed) {
                failure.addSuppressed(suppressed);
            }
        }
    }

    /** Where fetched atomic values go: the null region where the NIC has one, else a registered scratch word. */
    private NicMemory fetchRegion() {
        if (fetchRegion == null) {
            if (nic.capabilities().nullMemory()) {
                fetchRegion = nic.nullMemory();
            } else {
                WordMemory scratch = words.allocate(64);
                owned.add(scratch);
                fetchRegion = nic.registerMemory(new MemoryRegistration(null, scratch.address(), 64, MemoryKind.HOST_MAPPED,
                        Set.of(NicAccess.LOCAL_WRITE), "proxy fetched-value scratch"));
                owned.add(fetchRegion);
            }
        }
        return fetchRegion;
    }

    private Heap heap(int rank) {
        Heap h = heaps.get(rank);
        if (h == null) {
            throw new IllegalStateException("rank " + rank + "'s heap is not registered with " + nic.description());
        }
        return h;
    }

    private static <T extends AutoCloseable> T add(List<AutoCloseable> list, T r) {
        list.add(r);
        return r;
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the verbs proxy session on " + nic.description() + " is closed");
        }
    }

    /** Destroys the QPs and deregisters everything, newest first; idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException first = null;
        for (int i = owned.size() - 1; i >= 0; i--) {
            try {
                owned.get(i).close();
            } catch (Exception e) {
                if (first == null) {
                    first = e instanceof RuntimeException r ? r : new IllegalStateException(e);
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        owned.clear();
        heaps.clear();
        offered.clear();
        responders.clear();
        exchanges.clear();
        if (first != null) {
            throw first;
        }
    }
}
