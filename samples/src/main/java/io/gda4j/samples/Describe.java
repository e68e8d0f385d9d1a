package io.gda4j.samples;

import io.gda4j.world.Rank;
import io.gda4j.world.World;

import java.util.Locale;

/** The one-line context printed under every result table: which ranks, GPUs and transport were measured. */
final class Describe {
    private Describe() {
    }

    static String pair(World world, int rank, int peer) {
        Rank a = world.rank(rank);
        Rank b = world.rank(peer);
        String transport = world.transport(rank, peer).name().toLowerCase(Locale.ROOT);
        String shared = a.device().ordinal() == b.device().ordinal()
                ? " (both ranks on one GPU: a functional check, not a GPU-to-GPU figure)" : "";
        return String.format(Locale.ROOT, "rank %d (GPU %d, %s) -> rank %d (GPU %d, %s) over %s%s",
                rank, a.device().ordinal(), a.device().name(), peer, b.device().ordinal(), b.device().name(), transport, shared);
    }
}
