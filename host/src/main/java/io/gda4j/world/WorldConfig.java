package io.gda4j.world;

import io.gda4j.hostflag.HostFlags;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;

/**
 * Every setting of a world in one place: each has a system property ({@code *_PROP_NAME}), an environment variable
 * ({@code *_ENV}) and a default ({@code *_DEFAULT}); a property beats the environment, which beats the default.
 * Resolved once by {@link #resolve()}; {@code gda4j info} prints {@link #describe()}.
 */
public final class WorldConfig {
    public static final String HEAP_SIZE_PROP_NAME = "gda4j.heapSize";
    public static final String HEAP_SIZE_ENV = "GDA4J_HEAP_SIZE";
    public static final String HEAP_SIZE_DEFAULT = "256MiB";

    public static final String WAIT_TIMEOUT_PROP_NAME = "gda4j.waitTimeoutMillis";
    public static final String WAIT_TIMEOUT_ENV = "GDA4J_WAIT_TIMEOUT_MS";
    public static final String WAIT_TIMEOUT_DEFAULT = "10000";

    public static final String TRANSPORT_PROP_NAME = "gda4j.transport";
    public static final String TRANSPORT_ENV = "GDA4J_TRANSPORT";
    public static final String TRANSPORT_DEFAULT = "auto";

    public static final String GPUS_PROP_NAME = "gda4j.gpus";
    public static final String GPUS_ENV = "GDA4J_GPUS";
    /** Empty: one rank on each visible GPU. */
    public static final String GPUS_DEFAULT = "";

    /**
     * How the host writes flags a running kernel polls (proxy semaphores, FIFO tails): auto, gdrcopy, stream-write
     * or mapped-pinned; see {@link HostFlags}.
     */
    public static final String HOST_FLAG_PROP_NAME = "gda4j.hostFlag";
    public static final String HOST_FLAG_ENV = "GDA4J_HOST_FLAG";
    public static final String HOST_FLAG_DEFAULT = "auto";

    /** The name that lets {@code auto} pick the best transport for each pair (p2p, then ibgda, then proxy). */
    public static final String TRANSPORT_AUTO = "auto";

    private final long heapSizeBytes;
    private final Duration waitTimeout;
    private final String transport;
    private final List<Integer> gpus;
    private final HostFlags.Backend hostFlag;

    private WorldConfig(Builder b) {
        if (b.heapSizeBytes <= 0 || b.heapSizeBytes % 8 != 0) {
            throw new IllegalArgumentException("heap size must be a positive multiple of 8 bytes, got " + b.heapSizeBytes);
        }
        if (b.waitTimeout.isNegative() || b.waitTimeout.isZero()) {
            throw new IllegalArgumentException("wait timeout must be positive, got " + b.waitTimeout);
        }
        for (int g : b.gpus) {
            if (g < 0) {
                throw new IllegalArgumentException("GPU ordinals are >= 0, got " + g);
            }
        }
        this.heapSizeBytes = b.heapSizeBytes;
        this.waitTimeout = b.waitTimeout;
        this.transport = Objects.requireNonNull(b.transport, "transport");
        this.gpus = Collections.unmodifiableList(new ArrayList<>(b.gpus));
        this.hostFlag = Objects.requireNonNull(b.hostFlag, "hostFlag");
    }

    /** Settings from system properties and the environment, defaults elsewhere. */
    public static WorldConfig resolve() {
        return resolve(System.getProperties(), System.getenv());
    }

    /** Resolution from explicit sources (tests). */
    public static WorldConfig resolve(Properties props, Map<String, String> env) {
        Builder b = builder();
        b.heapSizeBytes(ByteSize.parse(setting(props, env, HEAP_SIZE_PROP_NAME, HEAP_SIZE_ENV, HEAP_SIZE_DEFAULT)));
        String timeout = setting(props, env, WAIT_TIMEOUT_PROP_NAME, WAIT_TIMEOUT_ENV, WAIT_TIMEOUT_DEFAULT);
        try {
            b.waitTimeout(Duration.ofMillis(Long.parseLong(timeout.trim())));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(WAIT_TIMEOUT_ENV + "/" + WAIT_TIMEOUT_PROP_NAME
                    + " must be a whole number of milliseconds, got '" + timeout + "'", e);
        }
        b.transport(setting(props, env, TRANSPORT_PROP_NAME, TRANSPORT_ENV, TRANSPORT_DEFAULT).trim());
        b.gpus(parseGpus(setting(props, env, GPUS_PROP_NAME, GPUS_ENV, GPUS_DEFAULT)));
        String hostFlag = setting(props, env, HOST_FLAG_PROP_NAME, HOST_FLAG_ENV, HOST_FLAG_DEFAULT);
        try {
            b.hostFlag(HostFlags.Backend.parse(hostFlag));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(HOST_FLAG_ENV + "/" + HOST_FLAG_PROP_NAME + ": " + e.getMessage(), e);
        }
        return b.build();
    }

    private static String setting(Properties props, Map<String, String> env, String prop, String envName, String def) {
        String v = props.getProperty(prop);
        if (v == null) {
            v = env.get(envName);
        }
        return v == null ? def : v;
    }

    /** Parses "0,1,3" (repeats allowed: two ranks may share a GPU for testing); empty means every visible GPU. */
    public static List<Integer> parseGpus(String text) {
        List<Integer> out = new ArrayList<>();
        if (text == null || text.isBlank()) {
            return out;
        }
        for (String part : text.split(",")) {
            try {
                out.add(Integer.parseInt(part.trim()));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("GPU list '" + text + "' does not parse: use ordinals such as 0,1", e);
            }
        }
        return out;
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        return new Builder().heapSizeBytes(heapSizeBytes).waitTimeout(waitTimeout).transport(transport).gpus(gpus)
                .hostFlag(hostFlag);
    }

    public long heapSizeBytes() {
        return heapSizeBytes;
    }

    public Duration waitTimeout() {
        return waitTimeout;
    }

    /** "auto" or a transport name (p2p, ibgda, proxy). */
    public String transport() {
        return transport;
    }

    /** GPU ordinal of each rank; empty = one rank per visible GPU. */
    public List<Integer> gpus() {
        return gpus;
    }

    /**
     * The host-flag backend to ask {@link HostFlags#allocate} for; {@code AUTO} (the default) takes gdrcopy where it
     * is usable.
     */
    public HostFlags.Backend hostFlag() {
        return hostFlag;
    }

    /** One line per setting with where to change it, for {@code gda4j info}. */
    public String describe() {
        return String.format("heap size     %s  (%s / -D%s)%n", ByteSize.format(heapSizeBytes), HEAP_SIZE_ENV, HEAP_SIZE_PROP_NAME)
                + String.format("wait timeout  %d ms  (%s / -D%s)%n", waitTimeout.toMillis(), WAIT_TIMEOUT_ENV, WAIT_TIMEOUT_PROP_NAME)
                + String.format("transport     %s  (%s / -D%s)%n", transport, TRANSPORT_ENV, TRANSPORT_PROP_NAME)
                + String.format("gpus          %s  (%s / -D%s)%n", gpus.isEmpty() ? "all visible" : gpus, GPUS_ENV, GPUS_PROP_NAME)
                + String.format("host flag     %s  (%s / -D%s)%n", hostFlag, HOST_FLAG_ENV, HOST_FLAG_PROP_NAME);
    }

    /** Mutable builder; {@link #build()} validates. */
    public static final class Builder {
        private long heapSizeBytes = ByteSize.parse(HEAP_SIZE_DEFAULT);
        private Duration waitTimeout = Duration.ofMillis(Long.parseLong(WAIT_TIMEOUT_DEFAULT));
        private String transport = TRANSPORT_DEFAULT;
        private List<Integer> gpus = new ArrayList<>();
        private HostFlags.Backend hostFlag = HostFlags.Backend.parse(HOST_FLAG_DEFAULT);

        public Builder heapSizeBytes(long v) {
            heapSizeBytes = v;
            return this;
        }

        public Builder waitTimeout(Duration v) {
            waitTimeout = Objects.requireNonNull(v, "waitTimeout");
            return this;
        }

        public Builder transport(String v) {
            transport = v;
            return this;
        }

        public Builder gpus(List<Integer> v) {
            gpus = new ArrayList<>(v);
            return this;
        }

        public Builder hostFlag(HostFlags.Backend v) {
            hostFlag = Objects.requireNonNull(v, "hostFlag");
            return this;
        }

        public WorldConfig build() {
            return new WorldConfig(this);
        }
    }
}
