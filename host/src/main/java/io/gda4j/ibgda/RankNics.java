package io.gda4j.ibgda;

import io.gda4j.nic.Nic;
import io.gda4j.nic.NicException;
import io.gda4j.nic.NicOptions;
import io.gda4j.nic.NicProvider;
import io.gda4j.nic.topology.NicAffinity;
import io.gda4j.nic.topology.NicAssignment;
import io.gda4j.nic.topology.NicPlacement;
import io.gda4j.nic.topology.PciTopology;
import io.gda4j.transport.LinkEnd;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The NIC each rank of a world posts on. A provider placed by PCIe distance (mlx5) gives each rank the port
 * {@link NicAffinity} picks for its GPU, so every GPU rings the doorbells of, and is read and written by, a NIC
 * near it; ranks that get the same port share one open NIC. Any other provider is one NIC for all ranks, or one
 * per GPU where it says so ({@link NicProvider#oneNicPerGpu()}: the strict emulated NIC). NICs are opened on first use and closed together by {@link #close}.
 */
final class RankNics {
    /** Key of the one NIC of a provider not placed by distance. */
    private static final String SHARED = "";

    private final NicProvider provider;
    private final NicAffinity affinity;
    private final NicPlacement placement;
    private final Map<Integer, NicAssignment> assignments = new HashMap<>();
    private final Map<Integer, Nic> byRank = new HashMap<>();
    private final Map<String, Nic> opened = new LinkedHashMap<>();

    /**
     * A rank as NIC choice sees it.
     *
     * @param rank       its rank in the world
     * @param localRank  its index among the ranks this process drives (what {@code GDA4J_NIC_DEVICE}'s list is
     *                   indexed by)
     * @param localRanks how many ranks this process drives
     * @param gpuBusId   its GPU's PCI address
     */
    record Member(int rank, int localRank, int localRanks, String gpuBusId) {
        /**
         * One JVM drives every rank of a {@code LocalWorld}, so the rank is the local rank; a multi-process world
         * must give its LOCAL_RANK and local size here instead.
         */
        static Member of(LinkEnd rank) {
            return new Member(rank.rank(), rank.rank(), rank.worldSize(), rank.device().pciBusId());
        }
    }

    RankNics(NicProvider provider, NicPlacement placement) {
        this(provider, placement, provider.placedByPciDistance() ? PciTopology.ofThisMachine() : null);
    }

    /** With {@code topology} read from a fake tree (tests); null for a provider every rank shares. */
    RankNics(NicProvider provider, NicPlacement placement, PciTopology topology) {
        this.provider = provider;
        this.placement = placement;
        this.affinity = provider.placedByPciDistance() ? new NicAffinity(topology, placement) : null;
    }

    synchronized Optional<String> unusableReason(LinkEnd rank) {
        return unusableReason(Member.of(rank));
    }

    synchronized Nic of(LinkEnd rank) {
        return of(Member.of(rank));
    }

    /** Why {@code rank} can have no NIC (a refused GPU/NIC pair, a bad device list), or empty. */
    synchronized Optional<String> unusableReason(Member rank) {
        try {
            assignment(rank);
            return Optional.empty();
        } catch (NicException e) {
            return Optional.of(e.getMessage());
        }
    }

    /** The NIC {@code rank} posts on, opened at its first use. */
    synchronized Nic of(Member rank) {
        Nic nic = byRank.get(rank.rank());
        if (nic != null) {
            return nic;
        }
        Optional<NicAssignment> a = assignment(rank);
        String key = a.map(x -> x.port() == null ? "first" : x.port().label())
                .orElse(provider.oneNicPerGpu() ? "GPU " + rank.gpuBusId() : SHARED);
        nic = opened.get(key);
        if (nic == null) {
            NicOptions options = a.map(NicAssignment::options).orElseGet(this::sharedOptions);
            nic = provider.open(options);
            opened.put(key, nic);
        }
        byRank.put(rank.rank(), nic);
        return nic;
    }

    /** The NIC {@code rank} already posts on, if any. */
    synchronized Optional<Nic> existing(LinkEnd rank) {
        return Optional.ofNullable(byRank.get(rank.rank()));
    }

    /** Every NIC opened so far, in opening order. */
    synchronized List<Nic> opened() {
        return new ArrayList<>(opened.values());
    }

    /** Closes every NIC opened, newest first, adding failures to {@code failures}. */
    synchronized void close(List<RuntimeException> failures) {
        List<Nic> nics = new ArrayList<>(opened.values());
        for (int i = nics.size() - 1; i >= 0; i--) {
            try {
                nics.get(i).close();
            } catch (RuntimeException e) {
                failures.add(e);
            }
        }
        opened.clear();
        byRank.clear();
    }

    /** The port chosen for {@code rank}'s GPU; empty for a provider every rank shares. */
    private Optional<NicAssignment> assignment(Member rank) {
        if (affinity == null) {
            return Optional.empty();
        }
        NicAssignment a = assignments.get(rank.rank());
        if (a == null) {
            a = affinity.choose(rank.localRank(), rank.localRanks(), rank.gpuBusId());
            assignments.put(rank.rank(), a);
        }
        return Optional.of(a);
    }

    /** The shared NIC ignores distance; a single named device still names it (the emulated NIC ignores names). */
    private NicOptions sharedOptions() {
        if (placement.devices().isEmpty()) {
            return NicOptions.defaults();
        }
        NicPlacement.NamedPort named = placement.devices().get(0);
        return new NicOptions(named.device(), Math.max(1, named.port()), 0);
    }
}
