package io.gda4j.ibgda;

import io.gda4j.cuda.DeviceMemory;
import io.gda4j.nic.MemoryKind;
import io.gda4j.nic.MemoryRegistration;
import io.gda4j.nic.Nic;
import io.gda4j.nic.NicAccess;
import io.gda4j.nic.NicMemory;
import io.gda4j.nic.NicQp;
import io.gda4j.nic.QpPair;
import io.gda4j.nic.QpSpec;
import io.gda4j.nic.emulated.EmulatedNic;
import io.gda4j.transport.PeerLink;
import io.gda4j.transport.TransportTag;
import io.gda4j.world.Rank;

import jcuda.driver.CUdevice_attribute;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One world's IBGDA state: the NICs ({@link RankNics}: each rank's own, chosen by PCIe distance, or one shared),
 * each rank's heap registration and flush resources, and one connected QP pair per pair of ranks (its two QPs on
 * the two ranks' NICs). The world connects ordered pairs one at a time ({@code (a, b)} then later
 * {@code (b, a)}); the pair is made at the first of the two, and each side gets its own QP's {@link DeviceQp}.
 *
 * <p>Closing: a world closes its ranks, and each rank its links. The first link to close quiesces the NIC (the
 * emulated engine stops and drains its streams) before any heap or context is freed; each link then frees its own QP
 * and DeviceQp; the last one frees the ranks' registrations and flush resources and closes the NICs.
 */
final class IbgdaSession {
    private final IbgdaConfig config;
    private final RankNics nics;
    private final Map<Integer, RankState> ranks = new HashMap<>();
    private final Map<Long, QpPair> pairs = new HashMap<>();
    private int openLinks;
    private boolean quiesced;
    private boolean closed;

    /** {@code CU_GPU_DIRECT_RDMA_WRITES_ORDERING_OWNER}: the GPU's own kernels see GPUDirect RDMA writes in order. */
    static final int WRITES_ORDERING_OWNER = 100;

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
    Optional<Nic> nicOf(Rank rank) {
        return nics.existing(rank);
    }

    /**
     * Whether quiet on {@code r}'s QPs, posted on {@code nic}, ends with the PCIe flush (after a get). Auto: where the
     * NIC's writes may pass their CQE, unless the GPU orders GPUDirect RDMA writes for its own kernels
     * ({@code CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING} at least OWNER; a real NIC's writes only: the
     * emulated NIC's are CUDA copies, about which the attribute says nothing).
     */
    private boolean flushOnQuiet(Rank r, Nic nic) {
        return switch (config.flush()) {
            case ALWAYS -> true;
            case NEVER -> false;
            case AUTO -> nic.capabilities().writesMayPassCqe() && (nic instanceof EmulatedNic
                    || r.context().device().attribute(CUdevice_attribute
                    .CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING) < WRITES_ORDERING_OWNER);
        };
    }

    /** Whether quiet on {@code rank}'s QPs ends with the PCIe flush. */
    synchronized boolean flushOnQuietOf(Rank rank) {
        RankState s = ranks.get(rank.rank());
        return s != null && s.flushOnQuiet;
    }

    /** One line: the flush and where discarded fetched values go for {@code r} (for labels and {@code info}). */
    synchronized String describeFetchedValues(Rank r) {
        RankState s = ranks.get(r.rank());
        if (s == null) {
            return "rank " + r.rank() + " has no IBGDA links";
        }
        return (s.flushOnQuiet ? "quiet ends with a PCIe flush after a get" : "no PCIe flush on quiet")
                + "; discarded fetched values go to " + (s.scratchRegion == null ? "the null MR"
                : "an 8-byte scratch MR");
    }

    synchronized PeerLink link(Rank local, Rank peer) {
        if (closed) {
            throw new IllegalStateException("the IBGDA session of this world is closed");
        }
        int lo = Math.min(local.rank(), peer.rank());
        int hi = Math.max(local.rank(), peer.rank());
        long key = (long) lo << 32 | hi;
        RankState mine = rankState(local);
        RankState theirs = rankState(peer);
        QpPair pair = pairs.get(key);
        if (pair == null) {
            Rank first = local.rank() == lo ? local : peer;
            Rank second = first == local ? peer : local;
            Nic firstNic = rankState(first).nic;
            Nic secondNic = rankState(second).nic;
            pair = firstNic == secondNic ? firstNic.createConnectedPair(spec(first, second), spec(second, first))
                    : QpPair.connect(firstNic, spec(first, second), secondNic, spec(second, first));
            pairs.put(key, pair);
        }
        NicQp qp = local.rank() == lo ? pair.first() : pair.second();
        DeviceQp dqp = DeviceQp.create(local.context(), qp.deviceRings(), new DeviceQp.Addressing(
                mine.heap.address(), theirs.heap.address(), local.heapSizeBytes(), mine.heap.lkey(),
                theirs.heap.rkey(), mine.flushOnQuiet ? mine.loopbackDeviceQp.address() : 0,
                mine.flushFlagRegion == null ? 0 : mine.flushFlagRegion.address(),
                mine.flushFlagRegion == null ? 0 : mine.flushFlagRegion.rkey(), mine.discardAddr(),
                mine.discardLkey(), mine.flushOnQuiet, mine.nic.capabilities().relaxedOrdering(), peer.rank()));
        openLinks++;
        AutoCloseable resources = () -> closeLink(qp, dqp);
        return new PeerLink(TransportTag.IBGDA, 0, dqp.address(), theirs.heap.rkey(), mine.heap.lkey(), 0, resources);
    }

    /** The GPU address of {@code rank}'s loopback DeviceQp (its own ADDs), or 0 when it has no IBGDA link. */
    synchronized long loopbackAtomicsQp(Rank rank) {
        RankState s = ranks.get(rank.rank());
        return s == null || s.loopbackDeviceQp == null ? 0 : s.loopbackDeviceQp.address();
    }

    private QpSpec spec(Rank poster, Rank target) {
        return new QpSpec(poster.context(), config.sqWqebbs(), config.sqWqebbs(), QpSpec.DEFAULT_MAX_INLINE_BYTES,
                "rank " + poster.rank() + " -> rank " + target.rank());
    }

    private RankState rankState(Rank r) {
        RankState s = ranks.get(r.rank());
        if (s != null) {
            return s;
        }
        s = new RankState();
        s.nic = nics.of(r);
        s.flushOnQuiet = flushOnQuiet(r, s.nic);
        Nic nic = s.nic;
        ranks.put(r.rank(), s);
        s.heap = nic.registerMemory(MemoryRegistration.deviceHeap(r.context(), r.heapBase(), r.heapSizeBytes(),
                "rank " + r.rank() + " heap"));
        s.words = r.context().allocate(64);
        s.words.fill((byte) 0);
        // The null MR drops fetched values without a PCIe write; it is needed only with the flush, and not every NIC
        // has one (ibv_alloc_null_mr): elsewhere they land in a scratch word nobody reads.
        if (!(s.flushOnQuiet && nic.capabilities().nullMemory())) {
            s.scratchRegion = nic.registerMemory(new MemoryRegistration(r.context(), s.words.address() + 8, 8,
                    MemoryKind.DEVICE, EnumSet.of(NicAccess.LOCAL_WRITE), "rank " + r.rank() + " discard scratch"));
        }
        if (s.flushOnQuiet) {
            s.flushFlagRegion = nic.registerMemory(new MemoryRegistration(r.context(), s.words.address(), 8,
                    MemoryKind.DEVICE, EnumSet.of(NicAccess.LOCAL_WRITE, NicAccess.REMOTE_ATOMIC),
                    "rank " + r.rank() + " flush flag"));
        }
        // Its IBGDA peers add to its words with NIC atomics, so its own ADDs must be NIC atomics too: ATOMIC_FAs on
        // this QP, which targets the rank's own heap (local and remote base are both its heap).
        s.loopbackQp = nic.createLoopbackQp(new QpSpec(r.context(), config.sqWqebbs(), config.sqWqebbs(),
                QpSpec.DEFAULT_MAX_INLINE_BYTES, "rank " + r.rank() + " loopback (own ADDs, PCIe flush)"));
        s.loopbackDeviceQp = DeviceQp.create(r.context(), s.loopbackQp.deviceRings(), new DeviceQp.Addressing(
                s.heap.address(), s.heap.address(), r.heapSizeBytes(), s.heap.lkey(), s.heap.rkey(), 0, 0, 0,
                s.discardAddr(), s.discardLkey(), false, nic.capabilities().relaxedOrdering(), r.rank()));
        return s;
    }

    private synchronized void closeLink(NicQp qp, DeviceQp dqp) {
        List<RuntimeException> failures = new ArrayList<>();
        if (!quiesced) {
            quiesced = true;
            for (Nic nic : nics.opened()) {
                if (nic instanceof EmulatedNic emulated) {
                    run(failures, emulated::quiesce);
                }
            }
        }
        run(failures, qp::close);
        run(failures, dqp::close);
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
        for (QpPair p : pairs.values()) {
            run(failures, p::close);
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
        try {
            step.run();
        } catch (RuntimeException e) {
            failures.add(e);
        }
    }
}
