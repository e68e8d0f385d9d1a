package io.gda4j.cuda;

import io.gda4j.world.Rank;

/** For {@code io.gda4j.LayeringTest} only: cuda using world is an arrow up the layers. */
public final class LayeringFixtureUpward {
    private LayeringFixtureUpward() {
    }

    static int rankOf(Rank rank) {
        return rank.rank();
    }
}
