package io.gda4j.world;

import io.gda4j.config.Setting;
import io.gda4j.config.SettingException;
import io.gda4j.config.Settings;
import io.gda4j.hostflag.HostFlags;
import io.gda4j.transport.Transports;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;

/**
 * Every setting of a world in one place: each has a system property ({@code *_PROP_NAME}), an environment variable
 * ({@code *_ENV}) and a default ({@code *_DEFAULT}); a property beats the environment, which beats the default
 * ({@link Setting}). Resolved once by {@link #resolve()}, which throws a {@link SettingException} naming the
 * variable or property of a bad value; {@code gda4j info} prints {@link #SETTINGS}.
 */
public final class WorldConfig {
    public static final String HEAP_SIZE_PROP_NAME = "gda4j.heapSize";
    public static final String HEAP_SIZE_ENV = "GDA4J_HEAP_SIZE";
    public static final String HEAP_SIZE_DEFAULT = "256MiB";

    public static final String WAIT_TIMEOUT_PROP_NAME = "gda4j.waitTimeoutMillis";
    public static final String WAIT_TIMEOUT_ENV = "GDA4J_WAIT_TIMEOUT_MS";
    public static final String WAIT_TIMEOUT_DEFAULT = "10000";

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

    /**
     * The host a process of a multi-process world counts as: processes with the same name share a host (CUDA IPC,
     * the copy engine), others reach each other only through a NIC. Empty (the default): this machine's host name
     * and boot id. A name of its own per process lets one machine stand for several hosts in tests.
     */
    public static final String HOST_NAME_PROP_NAME = "gda4j.hostName";
    public static final String HOST_NAME_ENV = "GDA4J_HOST_NAME";
    public static final String HOST_NAME_DEFAULT = "";

    /** The longest device-side wait timeout: a day (a longer wait is a hang, not a wait). */
    public static final long MAX_WAIT_TIMEOUT_MILLIS = 86_400_000L;

    public static final Setting<Long> HEAP_SIZE = Setting.of("symmetric heap size", HEAP_SIZE_PROP_NAME,
            HEAP_SIZE_ENV, HEAP_SIZE_DEFAULT, "a positive multiple of 8 bytes with an optional unit, e.g. 64MiB, "
                    + "4k, 1g", text -> checkHeapSize(ByteSize.parse(text)))
            .displayedAs(ByteSize::format)
            .withNote("the gda4j benchmarks size the heap for their largest message and ignore it");
    public static final Setting<Duration> WAIT_TIMEOUT = Setting.of("device-side wait timeout", WAIT_TIMEOUT_PROP_NAME,
            WAIT_TIMEOUT_ENV, WAIT_TIMEOUT_DEFAULT, "a whole number of milliseconds from 1 to "
                    + MAX_WAIT_TIMEOUT_MILLIS + " (a day)", text -> checkWaitTimeout(Duration.ofMillis(
                    Long.parseLong(text))))
            .displayedAs(d -> d.toMillis() + " ms")
            .withNote("gda4j latency/bandwidth/compare --timeout-ms and hostflag --timeout-ms override it");
    public static final Setting<List<Integer>> GPUS = Setting.of("GPUs of the ranks", GPUS_PROP_NAME, GPUS_ENV,
            GPUS_DEFAULT, "GPU ordinals separated by commas, e.g. 0,1 (a GPU may repeat); unset means every visible GPU",
            WorldConfig::parseGpus)
            .displayedAs(g -> g.isEmpty() ? "all visible" : g.toString())
            .withNote("--gpus overrides it");
    public static final Setting<HostFlags.Backend> HOST_FLAG = Setting.of("host flag backend", HOST_FLAG_PROP_NAME,
            HOST_FLAG_ENV, HOST_FLAG_DEFAULT, "one of " + HostFlags.Backend.choices(), HostFlags.Backend::parse);

    public static final Setting<String> HOST_NAME = Setting.of("host of this process", HOST_NAME_PROP_NAME,
            HOST_NAME_ENV, HOST_NAME_DEFAULT, "a name, or nothing for this machine (its host name and boot id)",
            String::strip)
            .displayedAs(n -> n.isEmpty() ? "this machine" : n)
            .withNote("processes of one machine given names of their own count as hosts of their own (tests)");

    /** Every setting of this class, in the order {@code gda4j info} prints them. */
    public static final List<Setting<?>> SETTINGS = List.of(HEAP_SIZE, WAIT_TIMEOUT, Transports.TRANSPORT, GPUS,
            HOST_FLAG, HOST_NAME);

    private final long heapSizeBytes;
    private final Duration waitTimeout;
    private final String transport;
    private final List<Integer> gpus;
    private final HostFlags.Backend hostFlag;
    private final String hostName;
    private final Settings settings;

    private WorldConfig(Builder b) {
        checkHeapSize(b.heapSizeBytes);
        checkWaitTimeout(b.waitTimeout);
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
        this.hostName = Objects.requireNonNull(b.hostName, "hostName").strip();
        this.settings = b.settings != null ? b.settings : Settings.ofProcess();
    }

    /** Settings from system properties and the environment, defaults elsewhere. */
    public static WorldConfig resolve() {
        return resolve(Settings.ofProcess());
    }

    /**
     * Resolution from explicit sources (tests).
     *
     * @throws SettingException naming the variable or property of the first bad value
     */
    public static WorldConfig resolve(Properties props, Map<String, String> env) {
        return resolve(Settings.of(props, env));
    }

    /**
     * This class's settings from {@code settings}, which the world also hands its transports (their own settings,
     * such as the NIC or the proxy's handler, travel in it).
     *
     * @throws SettingException naming the variable or property of the first bad value
     */
    public static WorldConfig resolve(Settings settings) {
        return builder().heapSizeBytes(settings.get(HEAP_SIZE)).waitTimeout(settings.get(WAIT_TIMEOUT))
                .transport(settings.get(Transports.TRANSPORT)).gpus(settings.get(GPUS))
                .hostFlag(settings.get(HOST_FLAG)).hostName(settings.get(HOST_NAME)).settings(settings).build();
    }

    /** Returns {@code bytes} when it is a usable heap size: positive and a multiple of 8. */
    static long checkHeapSize(long bytes) {
        if (bytes <= 0 || bytes % 8 != 0) {
            throw new IllegalArgumentException("heap size must be a positive multiple of 8 bytes, got " + bytes);
        }
        return bytes;
    }

    /** Returns {@code timeout} when it is a usable wait timeout: 1 ms .. {@value #MAX_WAIT_TIMEOUT_MILLIS} ms. */
    static Duration checkWaitTimeout(Duration timeout) {
        if (timeout.toMillis() < 1 || timeout.toMillis() > MAX_WAIT_TIMEOUT_MILLIS) {
            throw new IllegalArgumentException("wait timeout must be 1 to " + MAX_WAIT_TIMEOUT_MILLIS + " ms, got "
                    + timeout.toMillis() + " ms");
        }
        return timeout;
    }

    /**
     * Parses "0,1,3" (repeats allowed: two ranks may share a GPU for testing); empty means every visible GPU.
     * Every element must be an ordinal >= 0: an empty element ("0,,1") is refused.
     */
    public static List<Integer> parseGpus(String text) {
        List<Integer> out = new ArrayList<>();
        if (text == null || text.isBlank()) {
            return out;
        }
        for (String part : text.split(",", -1)) {
            int gpu;
            try {
                gpu = Integer.parseInt(part.strip());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("GPU list '" + text + "' does not parse: use ordinals such as 0,1", e);
            }
            if (gpu < 0) {
                throw new IllegalArgumentException("GPU list '" + text + "' has " + gpu + ": ordinals are 0 or more");
            }
            out.add(gpu);
        }
        return out;
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        return new Builder().heapSizeBytes(heapSizeBytes).waitTimeout(waitTimeout).transport(transport).gpus(gpus)
                .hostFlag(hostFlag).hostName(hostName).settings(settings);
    }

    public long heapSizeBytes() {
        return heapSizeBytes;
    }

    public Duration waitTimeout() {
        return waitTimeout;
    }

    /** {@link Transports#AUTO} or a transport's name. */
    public String transport() {
        return transport;
    }

    /**
     * Where the world's transports and NICs take their own settings from: the process's system properties and
     * environment when this configuration was built, with what a program set on top ({@link Builder#setting}).
     */
    public Settings settings() {
        return settings;
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

    /** The host this process counts as ({@link #HOST_NAME_ENV}); empty: this machine. */
    public String hostName() {
        return hostName;
    }

    /** Mutable builder; {@link #build()} validates. */
    public static final class Builder {
        private long heapSizeBytes = HEAP_SIZE.parse(new Setting.Raw(HEAP_SIZE_DEFAULT, Setting.Source.DEFAULT));
        private Duration waitTimeout = WAIT_TIMEOUT.parse(new Setting.Raw(WAIT_TIMEOUT_DEFAULT, Setting.Source.DEFAULT));
        private String transport = Transports.AUTO;
        private List<Integer> gpus = new ArrayList<>();
        private HostFlags.Backend hostFlag = HostFlags.Backend.parse(HOST_FLAG_DEFAULT);
        private String hostName = HOST_NAME_DEFAULT;
        private Settings settings;

        /** Made by {@link WorldConfig#builder()} and {@link WorldConfig#toBuilder()}. */
        private Builder() {
        }

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

        public Builder hostName(String v) {
            hostName = Objects.requireNonNull(v, "hostName");
            return this;
        }

        /** The settings the world hands its transports; the process's, as they are at {@link #build()}, if unset. */
        public Builder settings(Settings v) {
            settings = Objects.requireNonNull(v, "settings");
            return this;
        }

        /** {@code setting} (of a transport or a NIC: {@code NicConfig.NIC}) as {@code text} for this world only. */
        public Builder setting(Setting<?> setting, String text) {
            settings = (settings != null ? settings : Settings.ofProcess()).with(setting, text);
            return this;
        }

        public WorldConfig build() {
            return new WorldConfig(this);
        }
    }
}
