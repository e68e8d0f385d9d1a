package io.gda4j.samples;

import io.gda4j.nic.NicUser;
import io.gda4j.nic.emulated.EngineStats;
import io.gda4j.nic.emulated.SoftwareNic;
import io.gda4j.transport.PeerLink;
import io.gda4j.transport.Transport;
import io.gda4j.transport.TransportProvider;
import io.gda4j.transport.Transports;
import io.gda4j.world.PeerCard;
import io.gda4j.world.ProcessWorld;
import io.gda4j.world.Rank;
import io.gda4j.world.World;

import java.util.Locale;
import java.util.Optional;

/** The one-line context printed under every result table: which ranks, GPUs and transport were measured. */
final class Describe {
    private Describe() {
    }

    static String pair(World world, int rank, int peer) {
        if (world instanceof ProcessWorld pw) {
            PeerCard a = pw.cards().get(rank);
            PeerCard b = pw.cards().get(peer);
            String shared = a.sameGpu(b)
                    ? " (both processes on one GPU, time-sliced unless MPS runs: a functional check, not a GPU-to-GPU figure)" : "";
            String reach = a.sameHost(b) ? "heaps mapped by CUDA IPC" : "on two hosts: nothing mapped, through the NIC";
            return String.format(Locale.ROOT, "%s -> %s over %s between processes (%s)%s%s",
                    a.describe(), b.describe(), world.transport(rank, peer).label(), reach,
                    nicLabel(world, rank, peer), shared);
        }
        Rank a = world.rank(rank);
        Rank b = world.rank(peer);
        String transport = world.transport(rank, peer).label();
        String shared = a.device().ordinal() == b.device().ordinal()
                ? " (both ranks on one GPU: a functional check, not a GPU-to-GPU figure)" : "";
        return String.format(Locale.ROOT, "rank %d (GPU %d, %s) -> rank %d (GPU %d, %s) over %s%s%s",
                rank, a.device().ordinal(), a.device().name(), peer, b.device().ordinal(), b.device().name(), transport,
                nicLabel(world, rank, peer), shared);
    }

    /**
     * What the pair's transport says of the link (its provider's {@link TransportProvider#describeLink}): which NIC
     * carried the figures, the emulated NIC always named as such, or which proxy handler; empty for another process.
     */
    static String nicLabel(World world, int rank, int peer) {
        if (world.localRank(rank).isEmpty()) {
            return "";
        }
        Rank local = world.rank(rank);
        PeerLink link = local.link(peer);
        Transport transport = world.transport(rank, peer);
        for (TransportProvider p : Transports.providers(world.config().settings())) {
            if (link != null && p.transport() == transport) {
                return p.describeLink(local, link).orElse("");
            }
        }
        return "";
    }

    /** The emulated NIC's engine counters, or null when the pair does not run on it. */
    static EngineStats engineStats(World world, int rank) {
        if (world.localRank(rank).isEmpty()) {
            return null; // another process drives it, on its own emulated NIC
        }
        Rank local = world.rank(rank);
        for (int p = 0; p < local.worldSize(); p++) {
            PeerLink link = local.link(p);
            Optional<SoftwareNic> nic = link != null && link.resources() instanceof NicUser user
                    ? user.nic().flatMap(n -> n.facet(SoftwareNic.class)) : Optional.empty();
            if (nic.isPresent()) {
                return nic.get().stats();
            }
        }
        return null;
    }

    /** "emulated NIC engine: N WQEs, X us of engine-thread time per WQE" for a table note. */
    static String engineNote(EngineStats run) {
        return String.format(Locale.ROOT, "emulated NIC engine: %d WQEs, %.2f us of engine-thread time per WQE"
                        + " (decode, checks, queuing the CUDA work; at most %.0f k WQEs/s)", run.wqes(),
                run.nanosPerWqe() / 1e3, run.wqesPerBusySecond() / 1e3);
    }
}
