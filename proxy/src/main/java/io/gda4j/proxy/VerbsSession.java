package io.gda4j.proxy;

import io.gda4j.nic.MemoryKind;
import io.gda4j.nic.MemoryRegistration;
import io.gda4j.nic.Nic;
import io.gda4j.nic.NicAccess;
import io.gda4j.nic.NicMemory;
import io.gda4j.nic.QpPair;
import io.gda4j.nic.QpSpec;
import io.gda4j.cuda.CudaContext;

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

    private final Nic nic;
    private final WordAllocator words;
    private final int sqWqebbs;
    private final Map<Integer, Heap> heaps = new HashMap<>();
    private final List<AutoCloseable> owned = new ArrayList<>();
    private NicMemory fetchRegion;
    private boolean closed;

    /**
     * @param sqWqebbs send-queue size of each QP (a power of two); every message takes at most three WQEBBs with its
     *                 credit traffic, so a queue of {@code 4 * window} never makes the proxy wait for a slot
     */
    public VerbsSession(Nic nic, WordAllocator words, int sqWqebbs) {
        this.nic = nic;
        this.words = words;
        this.sqWqebbs = sqWqebbs;
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
            for (int i = made.size() - 1; i >= 0; i--) {
                try {
                    made.get(i).close();
                } catch (Exception suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
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
        if (first != null) {
            throw first;
        }
    }
}
