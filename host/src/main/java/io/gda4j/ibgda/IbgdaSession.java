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

    /** A rank's NIC, its registrations on it and, when the flush is on, its loopback QP and flag. */
    private static final class RankState {
        Nic nic;
        boolean flushOnQuiet;
        NicMemory heap;
        DeviceMemory flushFlag;
        NicMemory flushFlagRegion;
        NicQp flushQp;
        DeviceQp flushDeviceQp;
    }

    IbgdaSession(IbgdaConfig config, RankNics nics) {
        this.config = config;
        this.nics = nics;
    }

    /** The NIC {@code rank} posts on, once it has a link. */
    Optional<Nic> nicOf(Rank rank) {
        return nics.existing(rank);
    }

    /** Whether quiet on {@code rank}'s QPs ends with the PCIe flush. */
    synchronized boolean flushOnQuiet(Rank rank) {
        RankState s = ranks.get(rank.rank());
        return s != null && s.flushOnQuiet;
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
                theirs.heap.rkey(), mine.flushDeviceQp == null ? 0 : mine.flushDeviceQp.address(),
                mine.flushFlag == null ? 0 : mine.flushFlagRegion.address(),
                mine.flushFlagRegion == null ? 0 : mine.flushFlagRegion.rkey(), mine.nic.nullMemory().lkey(),
                mine.flushOnQuiet, mine.nic.capabilities().relaxedOrdering(), peer.rank()));
        openLinks++;
        AutoCloseable resources = () -> closeLink(qp, dqp);
        return new PeerLink(TransportTag.IBGDA, 0, dqp.address(), theirs.heap.rkey(), mine.heap.lkey(), 0, resources);
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
        s.flushOnQuiet = switch (config.flush()) {
            case ALWAYS -> true;
            case NEVER -> false;
            case AUTO -> s.nic.capabilities().writesMayPassCqe();
        };
        Nic nic = s.nic;
        ranks.put(r.rank(), s);
        s.heap = nic.registerMemory(MemoryRegistration.deviceHeap(r.context(), r.heapBase(), r.heapSizeBytes(),
                "rank " + r.rank() + " heap"));
        if (s.flushOnQuiet) {
            s.flushFlag = r.context().allocate(64);
            s.flushFlag.fill((byte) 0);
            s.flushFlagRegion = nic.registerMemory(new MemoryRegistration(r.context(), s.flushFlag.address(), 8,
                    MemoryKind.DEVICE, EnumSet.of(NicAccess.LOCAL_WRITE, NicAccess.REMOTE_ATOMIC),
                    "rank " + r.rank() + " flush flag"));
            s.flushQp = nic.createLoopbackQp(QpSpec.of(r.context(), 64, "rank " + r.rank() + " PCIe flush"));
            s.flushDeviceQp = DeviceQp.create(r.context(), s.flushQp.deviceRings(), DeviceQp.Addressing.none(r.rank()));
        }
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
            if (s.flushDeviceQp != null) {
                run(failures, s.flushDeviceQp::close);
                run(failures, s.flushQp::close);
                run(failures, s.flushFlagRegion::close);
                run(failures, s.flushFlag::close);
            }
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
