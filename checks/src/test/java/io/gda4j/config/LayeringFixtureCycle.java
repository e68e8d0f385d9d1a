package io.gda4j.config;

import io.gda4j.bootstrap.BootstrapConfig;

/** For {@code io.gda4j.LayeringTest} only: config using bootstrap closes a cycle (bootstrap uses config). */
public final class LayeringFixtureCycle {
    private LayeringFixtureCycle() {
    }

    static Class<?> upward() {
        return BootstrapConfig.class;
    }
}
