package io.gda4j.transport;

import io.gda4j.world.Rank;

/** For {@code io.gda4j.LayeringTest} only: the transport package naming the world's Rank, an arrow up and a cycle. */
public final class LayeringFixtureSpiNamesRank {
    private LayeringFixtureSpiNamesRank() {
    }

    static int rankOf(Rank rank) {
        return rank.rank();
    }
}
