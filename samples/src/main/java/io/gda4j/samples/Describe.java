package io.gda4j.samples;

import io.gda4j.ibgda.IbgdaTransport;
import io.gda4j.nic.Nic;
import io.gda4j.nic.emulated.EmulatedNic;
import io.gda4j.nic.emulated.EngineStats;
import io.gda4j.proxy.ProxyTransport;
import io.gda4j.world.PeerCard;
import io.gda4j.world.ProcessWorld;
import io.gda4j.world.Rank;
import io.gda4j.world.World;

import java.util.Locale;

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
                    a.describe(), b.describe(), world.transport(rank, peer).name(), reach,
                    nicLabel(world, rank, peer), shared);
        }
        Rank a = world.rank(rank);
        Rank b = world.rank(peer);
        String transport = world.transport(rank, peer).name();
        String shared = a.device().ordinal() == b.device().ordinal()
                ? " (both ranks on one GPU: a functional check, not a GPU-to-GPU figure)" : "";
        return String.format(Locale.ROOT, "rank %d (GPU %d, %s) -> rank %d (GPU %d, %s) over %s%s%s",
                rank, a.device().ordinal(), a.device().name(), peer, b.device().ordinal(), b.device().name(), transport,
                nicLabel(world, rank, peer), shared);
    }

    /** For IBGDA: which NIC carried the figures; the emulated NIC is always named as such. */
    static String nicLabel(World world, int rank, int peer) {
        if (world.transport(rank, peer) == ProxyTransport.TAG && world.localRank(rank).isPresent()) {
            return ProxyTransport.handlerOf(world.rank(rank), peer).map(h -> " (proxy handler: " + h + ")").orElse("");
        }
        if (world.transport(rank, peer) != IbgdaTransport.TAG || world.localRank(rank).isEmpty()) {
            return "";
        }
        Nic nic = IbgdaTransport.nicOf(world.rank(rank)).orElse(null);
        if (nic == null) {
            return "";
        }
        String flush = IbgdaTransport.flushesOnQuiet(world.rank(rank)) ? ", PCIe flush on quiet" : "";
        return nic.isEmulated()
                ? " on the emulated NIC (a software model: an engine thread executes the WQEs with CUDA copies; these"
                + " are emulated NIC figures, not network figures" + flush + ")"
                : " on " + nic.description() + flush;
    }

    /** The emulated NIC's engine counters, or null when the pair does not run on it. */
    static EngineStats engineStats(World world, int rank) {
        if (world.localRank(rank).isEmpty()) {
            return null; // another process drives it, on its own emulated NIC
        }
        return IbgdaTransport.nicOf(world.rank(rank)).or(() -> ProxyTransport.nicOf(world.rank(rank)))
                .filter(n -> n instanceof EmulatedNic).map(n -> ((EmulatedNic) n).stats()).orElse(null);
    }

    /** "emulated NIC engine: N WQEs, X us of engine-thread time per WQE" for a table note. */
    static String engineNote(EngineStats run) {
        return String.format(Locale.ROOT, "emulated NIC engine: %d WQEs, %.2f us of engine-thread time per WQE"
                        + " (decode, checks, queuing the CUDA work; at most %.0f k WQEs/s)", run.wqes(),
                run.nanosPerWqe() / 1e3, run.wqesPerBusySecond() / 1e3);
    }
}
