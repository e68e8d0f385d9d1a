package io.gda4j.moe.ht;

import io.gda4j.moe.ll.LowLatencyRank;

/** For {@code io.gda4j.LayeringTest} only: the high-throughput protocol naming the low-latency one, which its rules refuse. */
public final class LayeringFixtureHtNamesLl {
    private LayeringFixtureHtNamesLl() {
    }

    static int spinning(LowLatencyRank r) {
        return r.hashCode();
    }
}
