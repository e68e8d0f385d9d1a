package io.gda4j.proxy;

import io.gda4j.config.Setting;
import io.gda4j.config.SettingException;
import io.gda4j.config.Settings;
import io.gda4j.world.WorldConfig;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

/**
 * Every setting of the host proxy in one place: a system property ({@code *_PROP_NAME}), an environment variable
 * ({@code *_ENV}) and a default ({@code *_DEFAULT}) each; a property beats the environment, which beats the default
 * ({@link Setting}). Resolved once per world by {@link #resolve(Settings)}, which throws a {@link SettingException}
 * naming the variable or property of a bad value; {@code gda4j info} prints {@link #SETTINGS}.
 */
public final class ProxyConfig {
    public static final String THREADS_PROP_NAME = "gda4j.proxy.threads";
    public static final String THREADS_ENV = "GDA4J_PROXY_THREADS";
    public static final String THREADS_DEFAULT = "1";

    public static final String FIFO_DEPTH_PROP_NAME = "gda4j.proxy.fifoDepth";
    public static final String FIFO_DEPTH_ENV = "GDA4J_PROXY_FIFO_DEPTH";
    public static final String FIFO_DEPTH_DEFAULT = "512";

    public static final String IDLE_PROP_NAME = "gda4j.proxy.idle";
    public static final String IDLE_ENV = "GDA4J_PROXY_IDLE";
    /** Spins with {@link Thread#onSpinWait()}: answers a GPU trigger soonest, one core per proxy thread. */
    public static final String IDLE_BUSY_SPIN = "busy-spin";
    /** {@link Thread#yield()} when idle: shares the core, adds a scheduler pass to the reaction time. */
    public static final String IDLE_YIELD = "yield";
    /** Spins, then yields, then parks for exponentially longer up to a limit; spins again as soon as work comes. */
    public static final String IDLE_BACKOFF = "backoff";
    public static final String IDLE_DEFAULT = IDLE_BUSY_SPIN;
    /** The back-off's spins, yields and park range (ns) before it reaches the longest park. */
    static final int BACKOFF_SPINS = 10_000;
    static final int BACKOFF_YIELDS = 100;
    static final long BACKOFF_MIN_PARK_NANOS = 1_000;
    static final long BACKOFF_MAX_PARK_NANOS = 1_000_000;

    public static final String SIGNAL_PATH_PROP_NAME = "gda4j.proxy.signalPath";
    public static final String SIGNAL_PATH_ENV = "GDA4J_PROXY_SIGNAL_PATH";
    public static final String SIGNAL_PATH_DEFAULT = "auto";

    public static final String CLOSE_TIMEOUT_PROP_NAME = "gda4j.proxy.closeTimeoutMillis";
    public static final String CLOSE_TIMEOUT_ENV = "GDA4J_PROXY_CLOSE_TIMEOUT_MS";
    public static final String CLOSE_TIMEOUT_DEFAULT = "5000";

    public static final String HANDLER_PROP_NAME = "gda4j.proxy.handler";
    public static final String HANDLER_ENV = "GDA4J_PROXY_HANDLER";
    public static final String HANDLER_DEFAULT = "auto";

    public static final String CREDITS_PROP_NAME = "gda4j.proxy.credits";
    public static final String CREDITS_ENV = "GDA4J_PROXY_CREDITS";
    public static final String CREDITS_DEFAULT = "256";
    public static final int MAX_CREDITS = 1 << 20;

    public static final String CREDIT_TIMEOUT_PROP_NAME = "gda4j.proxy.creditTimeoutMillis";
    public static final String CREDIT_TIMEOUT_ENV = "GDA4J_PROXY_CREDIT_TIMEOUT_MS";
    public static final String CREDIT_TIMEOUT_DEFAULT = "10000";

    /** Most triggers one channel hands over per polling cycle before the thread turns to its other channels. */
    public static final int BATCH = 64;
    public static final int MAX_THREADS = 64;

    public static final Setting<Integer> THREADS = Setting.of("proxy threads", THREADS_PROP_NAME, THREADS_ENV,
            THREADS_DEFAULT, "a whole number from 1 to " + MAX_THREADS, text -> checkThreads(Integer.parseInt(text)));
    public static final Setting<Integer> FIFO_DEPTH = Setting.of("proxy FIFO slots per channel", FIFO_DEPTH_PROP_NAME,
            FIFO_DEPTH_ENV, FIFO_DEPTH_DEFAULT, "a power of two from " + TriggerFifoDescriptor.MIN_CAPACITY + " to "
                    + TriggerFifoDescriptor.MAX_CAPACITY, text -> checkFifoDepth(Integer.parseInt(text)));
    public static final Setting<String> IDLE = Setting.of("proxy idle strategy", IDLE_PROP_NAME, IDLE_ENV,
            IDLE_DEFAULT, IDLE_BUSY_SPIN + ", " + IDLE_YIELD + " or " + IDLE_BACKOFF, text -> {
                idleStrategy(text); // validates
                return text.strip().toLowerCase(Locale.ROOT);
            });
    public static final Setting<SignalPath> SIGNAL_PATH = Setting.of("proxy signal path", SIGNAL_PATH_PROP_NAME,
            SIGNAL_PATH_ENV, SIGNAL_PATH_DEFAULT, "auto, direct or peer-stream", SignalPath::parse)
            .displayedAs(SignalPath::label);
    public static final Setting<Duration> CLOSE_TIMEOUT = Setting.of("proxy close timeout", CLOSE_TIMEOUT_PROP_NAME,
            CLOSE_TIMEOUT_ENV, CLOSE_TIMEOUT_DEFAULT, "a whole number of milliseconds from 1 to "
                    + WorldConfig.MAX_WAIT_TIMEOUT_MILLIS + " (a day)",
            text -> checkCloseTimeout(Duration.ofMillis(Long.parseLong(text))))
            .displayedAs(d -> d.toMillis() + " ms");

    public static final Setting<Handler> HANDLER = Setting.of("proxy handler", HANDLER_PROP_NAME, HANDLER_ENV,
            HANDLER_DEFAULT, "auto (copy engine within a host, verbs across hosts), copy or verbs", Handler::parse)
            .displayedAs(Handler::label);
    public static final Setting<Integer> CREDITS = Setting.of("proxy verbs credits per peer", CREDITS_PROP_NAME,
            CREDITS_ENV, CREDITS_DEFAULT, "a whole number of messages from 1 to " + MAX_CREDITS,
            text -> checkCredits(Integer.parseInt(text)));
    public static final Setting<Duration> CREDIT_TIMEOUT = Setting.of("proxy verbs credit wait",
            CREDIT_TIMEOUT_PROP_NAME, CREDIT_TIMEOUT_ENV, CREDIT_TIMEOUT_DEFAULT, "a whole number of milliseconds from"
                    + " 1 to " + WorldConfig.MAX_WAIT_TIMEOUT_MILLIS + " (a day)",
            text -> checkCreditTimeout(Duration.ofMillis(Long.parseLong(text))))
            .displayedAs(d -> d.toMillis() + " ms");

    /** Every setting of the proxy, in the order {@code gda4j info} prints them. */
    public static final List<Setting<?>> SETTINGS = List.of(THREADS, FIFO_DEPTH, IDLE, SIGNAL_PATH, CLOSE_TIMEOUT,
            HANDLER, CREDITS, CREDIT_TIMEOUT);

    /**
     * Which handler executes a channel's triggers. COPY: the copy engine (cuMemcpy into the peer's heap as this
     * process maps it: peers of this host only). VERBS: RDMA work requests the proxy thread posts on a QP toward the
     * peer's NIC (any peer a NIC reaches; on the emulated NIC a test instrument). AUTO: the copy engine for a peer on
     * this host, verbs for a peer on another host.
     */
    public enum Handler {
        AUTO, COPY, VERBS;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** The handler for a peer: AUTO resolved by where the peer is. */
        public Handler forPeer(boolean sameHost) {
            return this != AUTO ? this : sameHost ? COPY : VERBS;
        }

        public static Handler parse(String text) {
            for (Handler h : values()) {
                if (h.label().equals(text.trim().toLowerCase(Locale.ROOT))) {
                    return h;
                }
            }
            throw new IllegalArgumentException("unknown proxy handler '" + text + "': choose auto, copy or verbs");
        }
    }

    /**
     * How the signal of a trigger reaches the peer's word. DIRECT: the channel's stream (on the pushing rank's GPU)
     * writes it through peer access, right behind the copy. PEER_STREAM: a stream on the peer's GPU writes it after an
     * event from the copy stream, which needs no peer access. AUTO: DIRECT where peer access exists.
     */
    public enum SignalPath {
        AUTO, DIRECT, PEER_STREAM;

        public String label() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }

        static SignalPath parse(String text) {
            for (SignalPath p : values()) {
                if (p.label().equals(text.trim().toLowerCase(Locale.ROOT))) {
                    return p;
                }
            }
            throw new IllegalArgumentException("unknown signal path '" + text + "': choose auto, direct or peer-stream");
        }
    }

    private final int threads;
    private final int fifoDepth;
    private final String idle;
    private final SignalPath signalPath;
    private final Duration closeTimeout;
    private final Handler handler;
    private final int credits;
    private final Duration creditTimeout;

    public ProxyConfig(int threads, int fifoDepth, String idle, SignalPath signalPath, Duration closeTimeout) {
        this(threads, fifoDepth, idle, signalPath, closeTimeout, Handler.AUTO, Integer.parseInt(CREDITS_DEFAULT),
                Duration.ofMillis(Long.parseLong(CREDIT_TIMEOUT_DEFAULT)));
    }

    public ProxyConfig(int threads, int fifoDepth, String idle, SignalPath signalPath, Duration closeTimeout,
                       Handler handler, int credits, Duration creditTimeout) {
        checkThreads(threads);
        checkCredits(credits);
        checkCreditTimeout(creditTimeout);
        this.handler = Objects.requireNonNull(handler, "handler");
        this.credits = credits;
        this.creditTimeout = creditTimeout;
        checkFifoDepth(fifoDepth);
        idleStrategy(idle); // validates
        checkCloseTimeout(closeTimeout);
        this.threads = threads;
        this.fifoDepth = fifoDepth;
        this.idle = idle.trim().toLowerCase(Locale.ROOT);
        this.signalPath = signalPath;
        this.closeTimeout = closeTimeout;
    }

    /** @throws SettingException naming the variable or property of the first bad value */
    public static ProxyConfig resolve(Properties props, Map<String, String> env) {
        return resolve(Settings.of(props, env));
    }

    /**
     * The proxy's settings from a world's {@code settings}; the proxy transport resolves them once per world.
     *
     * @throws SettingException naming the variable or property of the first bad value
     */
    public static ProxyConfig resolve(Settings settings) {
        return new ProxyConfig(settings.get(THREADS), settings.get(FIFO_DEPTH), settings.get(IDLE),
                settings.get(SIGNAL_PATH), settings.get(CLOSE_TIMEOUT), settings.get(HANDLER),
                settings.get(CREDITS), settings.get(CREDIT_TIMEOUT));
    }

    private static int checkThreads(int threads) {
        if (threads < 1 || threads > MAX_THREADS) {
            throw new IllegalArgumentException("proxy threads must be 1.." + MAX_THREADS + ", got " + threads);
        }
        return threads;
    }

    private static int checkCredits(int credits) {
        if (credits < 1 || credits > MAX_CREDITS) {
            throw new IllegalArgumentException("proxy verbs credits must be 1.." + MAX_CREDITS + ", got " + credits);
        }
        return credits;
    }

    private static Duration checkCreditTimeout(Duration timeout) {
        if (timeout.toMillis() < 1 || timeout.toMillis() > WorldConfig.MAX_WAIT_TIMEOUT_MILLIS) {
            throw new IllegalArgumentException("the proxy credit wait must be 1 to "
                    + WorldConfig.MAX_WAIT_TIMEOUT_MILLIS + " ms, got " + timeout.toMillis() + " ms");
        }
        return timeout;
    }

    private static int checkFifoDepth(int depth) {
        TriggerFifoDescriptor.checkCapacity(depth);
        return depth;
    }

    private static Duration checkCloseTimeout(Duration timeout) {
        if (timeout.toMillis() < 1 || timeout.toMillis() > WorldConfig.MAX_WAIT_TIMEOUT_MILLIS) {
            throw new IllegalArgumentException("the proxy close timeout must be 1 to "
                    + WorldConfig.MAX_WAIT_TIMEOUT_MILLIS + " ms, got " + timeout.toMillis() + " ms");
        }
        return timeout;
    }

    /** Proxy threads; channels of local rank r are served by thread r mod threads. */
    public int threads() {
        return threads;
    }

    /** Slots of each channel's trigger FIFO (a power of two). */
    public int fifoDepth() {
        return fifoDepth;
    }

    /** A fresh idle strategy for one thread (Agrona's; each thread needs its own, the back-off has state). */
    public IdleStrategy newIdleStrategy() {
        return idleStrategy(idle);
    }

    private static IdleStrategy idleStrategy(String name) {
        switch (name.trim().toLowerCase(Locale.ROOT)) {
            case IDLE_BUSY_SPIN:
                return new BusySpinIdleStrategy();
            case IDLE_YIELD:
                return new YieldingIdleStrategy();
            case IDLE_BACKOFF:
                return new BackoffIdleStrategy(BACKOFF_SPINS, BACKOFF_YIELDS, BACKOFF_MIN_PARK_NANOS,
                        BACKOFF_MAX_PARK_NANOS);
            default:
                throw new IllegalArgumentException(IDLE_ENV + "/" + IDLE_PROP_NAME + ": unknown idle strategy '" + name
                        + "': use " + IDLE_BUSY_SPIN + ", " + IDLE_YIELD + " or " + IDLE_BACKOFF);
        }
    }

    public String idle() {
        return idle;
    }

    public SignalPath signalPath() {
        return signalPath;
    }

    /** How long closing waits for pending work to complete before it reports it as failed. */
    public Duration closeTimeout() {
        return closeTimeout;
    }

    /** The configured handler choice (AUTO until resolved per peer with {@link Handler#forPeer}). */
    public Handler handler() {
        return handler;
    }

    /** Verbs handler: messages a receiver grants a sender beyond what it has seen delivered. */
    public int credits() {
        return credits;
    }

    /** Verbs handler: how long a sender waits for credits before it fails the channel naming the receiver. */
    public Duration creditTimeout() {
        return creditTimeout;
    }

    public ProxyConfig withThreads(int n) {
        return new ProxyConfig(n, fifoDepth, idle, signalPath, closeTimeout, handler, credits, creditTimeout);
    }

    public ProxyConfig withFifoDepth(int n) {
        return new ProxyConfig(threads, n, idle, signalPath, closeTimeout, handler, credits, creditTimeout);
    }

    public ProxyConfig withSignalPath(SignalPath p) {
        return new ProxyConfig(threads, fifoDepth, idle, p, closeTimeout, handler, credits, creditTimeout);
    }

    public ProxyConfig withHandler(Handler h) {
        return new ProxyConfig(threads, fifoDepth, idle, signalPath, closeTimeout, h, credits, creditTimeout);
    }

}
