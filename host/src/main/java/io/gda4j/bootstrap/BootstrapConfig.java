package io.gda4j.bootstrap;

import java.net.InetSocketAddress;
import java.util.Objects;

/**
 * What one process needs to join the bootstrap, and its time limits.
 *
 * @param rank                    this process's rank; rank 0 listens at {@code root}
 * @param worldSize               the number of processes
 * @param root                    the root's address (rank 0 listens on its port, on every interface)
 * @param jobToken                the job's token: a hello with another token is refused
 * @param joinTimeoutMillis       how long the root waits for every rank, and a rank for the world to be complete
 * @param collectiveTimeoutMillis how long one all-gather or barrier may take
 * @param heartbeatIntervalMillis how often each side sends a heartbeat
 * @param deadAfterMillis         silence after which a peer is declared dead
 * @param maxMessageBytes         the largest contribution to an all-gather; larger frames are refused
 * @param helloTimeoutMillis      the root's limit for a whole handshake, however slowly its bytes come
 * @param maxPendingHellos        handshakes the root runs at once; a connection beyond them is closed unread
 * @param maxPendingHellosPerSource handshakes at once from one source address, so one host cannot take every slot
 */
public record BootstrapConfig(int rank, int worldSize, InetSocketAddress root, String jobToken, long joinTimeoutMillis,
                              long collectiveTimeoutMillis, long heartbeatIntervalMillis, long deadAfterMillis,
                              int maxMessageBytes, long helloTimeoutMillis, int maxPendingHellos,
                              int maxPendingHellosPerSource) {
    public static final long DEFAULT_JOIN_TIMEOUT_MILLIS = 60_000;
    public static final long DEFAULT_COLLECTIVE_TIMEOUT_MILLIS = 60_000;
    public static final long DEFAULT_HEARTBEAT_INTERVAL_MILLIS = 500;
    /** Six missed heartbeats: a long GC pause survives it, a dead process is found well inside 10 s. */
    public static final long DEFAULT_DEAD_AFTER_MILLIS = 3_000;
    public static final int DEFAULT_MAX_MESSAGE_BYTES = 1 << 20;
    public static final long DEFAULT_HELLO_TIMEOUT_MILLIS = 5_000;
    public static final int DEFAULT_MAX_PENDING_HELLOS = 64;
    /** Enough for every rank of a big host to knock at once, a quarter of the slots. */
    public static final int DEFAULT_MAX_PENDING_HELLOS_PER_SOURCE = 16;

    public BootstrapConfig {
        Objects.requireNonNull(root, "root");
        Objects.requireNonNull(jobToken, "jobToken");
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
        if (helloTimeoutMillis <= 0 || maxPendingHellos < 1 || maxPendingHellosPerSource < 1) {
            throw new IllegalArgumentException("hello limits must be positive: " + helloTimeoutMillis + " ms, "
                    + maxPendingHellos + " pending, " + maxPendingHellosPerSource + " per source");
        }
    }

    /** The default hello limits. */
    public BootstrapConfig(int rank, int worldSize, InetSocketAddress root, String jobToken, long joinTimeoutMillis,
                           long collectiveTimeoutMillis, long heartbeatIntervalMillis, long deadAfterMillis,
                           int maxMessageBytes) {
        this(rank, worldSize, root, jobToken, joinTimeoutMillis, collectiveTimeoutMillis, heartbeatIntervalMillis,
                deadAfterMillis, maxMessageBytes, DEFAULT_HELLO_TIMEOUT_MILLIS, DEFAULT_MAX_PENDING_HELLOS,
                DEFAULT_MAX_PENDING_HELLOS_PER_SOURCE);
    }

    /** The defaults for a process started by a launcher. */
    public static BootstrapConfig of(LaunchEnvironment env) {
        return of(env.rank(), env.worldSize(), env.root(), env.jobToken());
    }

    public static BootstrapConfig of(int rank, int worldSize, InetSocketAddress root, String jobToken) {
        return new BootstrapConfig(rank, worldSize, root, jobToken, DEFAULT_JOIN_TIMEOUT_MILLIS,
                DEFAULT_COLLECTIVE_TIMEOUT_MILLIS, DEFAULT_HEARTBEAT_INTERVAL_MILLIS, DEFAULT_DEAD_AFTER_MILLIS,
                DEFAULT_MAX_MESSAGE_BYTES);
    }

    public BootstrapConfig withTimeouts(long joinMillis, long collectiveMillis) {
        return new BootstrapConfig(rank, worldSize, root, jobToken, joinMillis, collectiveMillis,
                heartbeatIntervalMillis, deadAfterMillis, maxMessageBytes, helloTimeoutMillis, maxPendingHellos,
                maxPendingHellosPerSource);
    }

    public BootstrapConfig withToken(String token) {
        return new BootstrapConfig(rank, worldSize, root, token, joinTimeoutMillis, collectiveTimeoutMillis,
                heartbeatIntervalMillis, deadAfterMillis, maxMessageBytes, helloTimeoutMillis, maxPendingHellos,
                maxPendingHellosPerSource);
    }

    public BootstrapConfig withHelloLimits(long timeoutMillis, int pending, int pendingPerSource) {
        return new BootstrapConfig(rank, worldSize, root, jobToken, joinTimeoutMillis, collectiveTimeoutMillis,
                heartbeatIntervalMillis, deadAfterMillis, maxMessageBytes, timeoutMillis, pending, pendingPerSource);
    }

    public BootstrapConfig withLiveness(long heartbeatMillis, long deadAfter) {
        return new BootstrapConfig(rank, worldSize, root, jobToken, joinTimeoutMillis, collectiveTimeoutMillis,
                heartbeatMillis, deadAfter, maxMessageBytes, helloTimeoutMillis, maxPendingHellos,
                maxPendingHellosPerSource);
    }

    public BootstrapConfig withMaxMessageBytes(int bytes) {
        return new BootstrapConfig(rank, worldSize, root, jobToken, joinTimeoutMillis, collectiveTimeoutMillis,
                heartbeatIntervalMillis, deadAfterMillis, bytes, helloTimeoutMillis, maxPendingHellos,
                maxPendingHellosPerSource);
    }
}
