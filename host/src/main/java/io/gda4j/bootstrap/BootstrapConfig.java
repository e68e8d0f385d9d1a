package io.gda4j.bootstrap;

import io.gda4j.config.Setting;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Objects;
import java.util.function.UnaryOperator;

/**
 * What one process needs to join the bootstrap, and its time limits.
 *
 * @param rank                    this process's rank; rank 0 listens at {@code root}
 * @param worldSize               the number of processes
 * @param root                    the root's address (rank 0 listens on its port: on that address when it is
 *                                loopback, else on every interface)
 * @param jobToken                the job's token, which both sides prove they know without sending it
 * @param joinTimeoutMillis       how long the root waits for every rank, and a rank for the world to be complete
 * @param collectiveTimeoutMillis how long one all-gather or barrier may take
 * @param heartbeatIntervalMillis how often each side sends a heartbeat
 * @param deadAfterMillis         no byte from a peer, or a connection that takes no bytes, for this long, and the peer
 *                                is declared dead
 * @param maxMessageBytes         the largest contribution to an all-gather; a rank that sends a larger one is failed
 * @param helloTimeoutMillis      the root's limit for a whole handshake, however slowly its bytes come (its first
 *                                frame must come within a second, or this if shorter)
 * @param maxPendingHellos        unproven connections the root holds at once; a new one beyond them evicts one, from
 *                                the source holding the most, the one that has got least far (oldest first)
 */
public record BootstrapConfig(int rank, int worldSize, InetSocketAddress root, String jobToken, long joinTimeoutMillis,
                              long collectiveTimeoutMillis, long heartbeatIntervalMillis, long deadAfterMillis,
                              int maxMessageBytes, long helloTimeoutMillis, int maxPendingHellos) {
    public static final long DEFAULT_JOIN_TIMEOUT_MILLIS = 60_000;
    public static final long DEFAULT_COLLECTIVE_TIMEOUT_MILLIS = 60_000;
    public static final long DEFAULT_HEARTBEAT_INTERVAL_MILLIS = 500;
    /**
     * Twenty missed heartbeats: a long GC pause or a busy host survives it; a killed process is found at once anyway
     * (its connection closes), so only a stopped or unreachable one waits this long.
     */
    public static final long DEFAULT_DEAD_AFTER_MILLIS = 10_000;
    public static final int DEFAULT_MAX_MESSAGE_BYTES = 1 << 20;
    public static final long DEFAULT_HELLO_TIMEOUT_MILLIS = 5_000;
    /** A pending connection costs the root a descriptor and a small buffer, no thread: room for a flood to wait in. */
    public static final int DEFAULT_MAX_PENDING_HELLOS = 256;

    /** The longest time limit a setting accepts: a day (longer is a hang, not a wait). */
    public static final long MAX_TIMEOUT_MILLIS = 86_400_000L;

    public static final String JOIN_TIMEOUT_PROP_NAME = "gda4j.bootstrap.joinTimeoutMillis";
    public static final String JOIN_TIMEOUT_ENV = "GDA4J_BOOTSTRAP_JOIN_TIMEOUT_MS";
    public static final String JOIN_TIMEOUT_DEFAULT = Long.toString(DEFAULT_JOIN_TIMEOUT_MILLIS);

    public static final String COLLECTIVE_TIMEOUT_PROP_NAME = "gda4j.bootstrap.collectiveTimeoutMillis";
    public static final String COLLECTIVE_TIMEOUT_ENV = "GDA4J_BOOTSTRAP_COLLECTIVE_TIMEOUT_MS";
    public static final String COLLECTIVE_TIMEOUT_DEFAULT = Long.toString(DEFAULT_COLLECTIVE_TIMEOUT_MILLIS);

    public static final String DEAD_AFTER_PROP_NAME = "gda4j.bootstrap.deadAfterMillis";
    public static final String DEAD_AFTER_ENV = "GDA4J_BOOTSTRAP_DEAD_AFTER_MS";
    public static final String DEAD_AFTER_DEFAULT = Long.toString(DEFAULT_DEAD_AFTER_MILLIS);

    public static final Setting<Long> JOIN_TIMEOUT = Setting.of("bootstrap join timeout", JOIN_TIMEOUT_PROP_NAME,
            JOIN_TIMEOUT_ENV, JOIN_TIMEOUT_DEFAULT, "a whole number of milliseconds from 1 to " + MAX_TIMEOUT_MILLIS,
            text -> millis(text, 1)).displayedAs(m -> m + " ms");
    public static final Setting<Long> COLLECTIVE_TIMEOUT = Setting.of("bootstrap collective timeout",
            COLLECTIVE_TIMEOUT_PROP_NAME, COLLECTIVE_TIMEOUT_ENV, COLLECTIVE_TIMEOUT_DEFAULT,
            "a whole number of milliseconds from 1 to " + MAX_TIMEOUT_MILLIS, text -> millis(text, 1))
            .displayedAs(m -> m + " ms");
    public static final Setting<Long> DEAD_AFTER = Setting.of("bootstrap dead-after", DEAD_AFTER_PROP_NAME,
            DEAD_AFTER_ENV, DEAD_AFTER_DEFAULT, "a whole number of milliseconds from "
                    + (DEFAULT_HEARTBEAT_INTERVAL_MILLIS + 1) + " (more than the " + DEFAULT_HEARTBEAT_INTERVAL_MILLIS
                    + " ms heartbeat) to " + MAX_TIMEOUT_MILLIS,
            text -> millis(text, DEFAULT_HEARTBEAT_INTERVAL_MILLIS + 1))
            .displayedAs(m -> m + " ms")
            .withNote("no byte from a peer, or a connection that takes no bytes, for this long is a dead peer");

    /** Every setting of the bootstrap, in the order {@code gda4j info} prints them. */
    public static final List<Setting<?>> SETTINGS = List.of(JOIN_TIMEOUT, COLLECTIVE_TIMEOUT, DEAD_AFTER);

    public BootstrapConfig {
        Objects.requireNonNull(root, "root");
        Objects.requireNonNull(jobToken, "jobToken");
        int tokenBytes = jobToken.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
        if (tokenBytes == 0 || tokenBytes > BootstrapFrameDescriptor.MAX_TOKEN_BYTES) {
            throw new IllegalArgumentException("job token of " + tokenBytes + " bytes: 1 to "
                    + BootstrapFrameDescriptor.MAX_TOKEN_BYTES);
        }
        if (worldSize < 1 || rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException("rank " + rank + " is not in a world of " + worldSize);
        }
        if (joinTimeoutMillis <= 0 || collectiveTimeoutMillis <= 0 || heartbeatIntervalMillis <= 0
                || deadAfterMillis <= heartbeatIntervalMillis) {
            throw new IllegalArgumentException("timeouts must be positive and deadAfterMillis (" + deadAfterMillis
                    + ") longer than heartbeatIntervalMillis (" + heartbeatIntervalMillis + ")");
        }
        if (maxMessageBytes < 0) {
            throw new IllegalArgumentException("maxMessageBytes " + maxMessageBytes);
        }
        if (helloTimeoutMillis <= 0 || maxPendingHellos < 1) {
            throw new IllegalArgumentException("hello limits must be positive: " + helloTimeoutMillis + " ms, "
                    + maxPendingHellos + " pending");
        }
    }

    /** The default hello limits. */
    public BootstrapConfig(int rank, int worldSize, InetSocketAddress root, String jobToken, long joinTimeoutMillis,
                           long collectiveTimeoutMillis, long heartbeatIntervalMillis, long deadAfterMillis,
                           int maxMessageBytes) {
        this(rank, worldSize, root, jobToken, joinTimeoutMillis, collectiveTimeoutMillis, heartbeatIntervalMillis,
                deadAfterMillis, maxMessageBytes, DEFAULT_HELLO_TIMEOUT_MILLIS, DEFAULT_MAX_PENDING_HELLOS);
    }

    /** A process started by a launcher, with the time limits of this process's settings ({@link #SETTINGS}). */
    public static BootstrapConfig of(LaunchEnvironment env) {
        return of(env, System::getProperty, System::getenv);
    }

    /**
     * A process started by a launcher, with the time limits from {@code properties}, then {@code environment}.
     *
     * @throws io.gda4j.config.SettingException naming the variable or property of a bad value
     */
    public static BootstrapConfig of(LaunchEnvironment env, UnaryOperator<String> properties,
                                     UnaryOperator<String> environment) {
        return of(env.rank(), env.worldSize(), env.root(), env.jobToken())
                .withTimeouts(JOIN_TIMEOUT.resolve(properties, environment),
                        COLLECTIVE_TIMEOUT.resolve(properties, environment))
                .withLiveness(DEFAULT_HEARTBEAT_INTERVAL_MILLIS, DEAD_AFTER.resolve(properties, environment));
    }

    private static long millis(String text, long least) {
        long v = Long.parseLong(text);
        if (v < least || v > MAX_TIMEOUT_MILLIS) {
            throw new IllegalArgumentException(v + " ms is outside " + least + " to " + MAX_TIMEOUT_MILLIS);
        }
        return v;
    }

    public static BootstrapConfig of(int rank, int worldSize, InetSocketAddress root, String jobToken) {
        return new BootstrapConfig(rank, worldSize, root, jobToken, DEFAULT_JOIN_TIMEOUT_MILLIS,
                DEFAULT_COLLECTIVE_TIMEOUT_MILLIS, DEFAULT_HEARTBEAT_INTERVAL_MILLIS, DEFAULT_DEAD_AFTER_MILLIS,
                DEFAULT_MAX_MESSAGE_BYTES);
    }

    public BootstrapConfig withTimeouts(long joinMillis, long collectiveMillis) {
        return new BootstrapConfig(rank, worldSize, root, jobToken, joinMillis, collectiveMillis,
                heartbeatIntervalMillis, deadAfterMillis, maxMessageBytes, helloTimeoutMillis, maxPendingHellos);
    }

    public BootstrapConfig withToken(String token) {
        return new BootstrapConfig(rank, worldSize, root, token, joinTimeoutMillis, collectiveTimeoutMillis,
                heartbeatIntervalMillis, deadAfterMillis, maxMessageBytes, helloTimeoutMillis, maxPendingHellos);
    }

    public BootstrapConfig withHelloLimits(long timeoutMillis, int pending) {
        return new BootstrapConfig(rank, worldSize, root, jobToken, joinTimeoutMillis, collectiveTimeoutMillis,
                heartbeatIntervalMillis, deadAfterMillis, maxMessageBytes, timeoutMillis, pending);
    }

    public BootstrapConfig withLiveness(long heartbeatMillis, long deadAfter) {
        return new BootstrapConfig(rank, worldSize, root, jobToken, joinTimeoutMillis, collectiveTimeoutMillis,
                heartbeatMillis, deadAfter, maxMessageBytes, helloTimeoutMillis, maxPendingHellos);
    }

    public BootstrapConfig withMaxMessageBytes(int bytes) {
        return new BootstrapConfig(rank, worldSize, root, jobToken, joinTimeoutMillis, collectiveTimeoutMillis,
                heartbeatIntervalMillis, deadAfterMillis, bytes, helloTimeoutMillis, maxPendingHellos);
    }
}
