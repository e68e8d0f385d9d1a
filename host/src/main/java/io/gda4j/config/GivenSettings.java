package io.gda4j.config;

import java.util.Objects;

/**
 * The settings a component was handed (a world's, through {@code TransportProvider.configure}), or, for one used
 * without being handed any, the process's, taken once at first use. Thread-safe.
 */
public final class GivenSettings {
    private Settings settings;

    /** Holds nothing until {@link #set} or the first {@link #get}. */
    public GivenSettings() {
    }

    /** Replaces the settings handed before, if any. */
    public synchronized void set(Settings given) {
        settings = Objects.requireNonNull(given, "settings");
    }

    /** The settings handed, else the process's as they were at the first call. */
    public synchronized Settings get() {
        if (settings == null) {
            settings = Settings.ofProcess();
        }
        return settings;
    }
}
