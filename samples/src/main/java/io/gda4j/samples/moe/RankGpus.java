package io.gda4j.samples.moe;

import io.gda4j.world.PeerCard;
import io.gda4j.world.ProcessWorld;
import io.gda4j.world.Rank;
import io.gda4j.world.World;

import java.util.List;
import java.util.function.BiPredicate;

/**
 * Which ranks of a world run on one GPU, as one label per rank: the lowest rank on the same GPU. Bytes between two
 * ranks of one label never cross a link between GPUs (the link figures of {@code gda4j moe} leave them out), and NCCL
 * refuses two ranks of one label.
 */
public final class RankGpus {
    private RankGpus() {
    }

    /**
     * The labels of {@code world}'s ranks: by device in a world of one process, by the cards' GPU (host and UUID) in a
     * {@link ProcessWorld}.
     */
    public static int[] of(World world) {
        if (world instanceof ProcessWorld pw) {
            return labels(pw.cards(), PeerCard::sameGpu);
        }
        List<Rank> ranks = world.localRanks();
        if (ranks.size() != world.size()) {
            throw new IllegalArgumentException("a world whose ranks live in other processes must be a ProcessWorld"
                    + " (its cards tell where they run)");
        }
        return labels(ranks, (a, b) -> a.device().ordinal() == b.device().ordinal());
    }

    /** Per item, in order, the index of the first item {@code sameGpu} with it (itself when none comes before). */
    static <T> int[] labels(List<T> byRank, BiPredicate<T, T> sameGpu) {
        int[] label = new int[byRank.size()];
        for (int r = 0; r < label.length; r++) {
            label[r] = r;
            for (int q = 0; q < r; q++) {
                if (sameGpu.test(byRank.get(q), byRank.get(r))) {
                    label[r] = label[q];
                    break;
                }
            }
        }
        return label;
    }

    /** The lowest rank whose GPU is not {@code rank}'s, or -1 when every rank shares it. */
    public static int firstOnAnotherGpu(int[] labels, int rank) {
        for (int p = 0; p < labels.length; p++) {
            if (labels[p] != labels[rank]) {
                return p;
            }
        }
        return -1;
    }
}
