package io.gda4j.nic.emulated;

import io.gda4j.config.Setting;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

/**
 * Settings of the emulated NIC, each with a system property, an environment variable and a default (a property beats
 * the environment, which beats the default: {@link Setting}).
 *
 * @param idleStrategy  {@code spin} (default: lowest latency, one core busy while the NIC is open) or {@code backoff}
 * @param startEngine   whether the NIC runs its engine thread (tests drive {@link EmulatedEngine#doWork()} by hand)
 * @param strict        {@code true} (default): the NIC guarantees no more than a ConnectX does, so code that relies on
 *                      more fails a test ({@link EmulatedEngine} lists how): a WQE without the fence bit runs before
 *                      earlier READ and fetching-atomic responses have landed; QP states, transport retries, the
 *                      responder's access flags and depth; relaxed ordering by the target's registration; one NIC
 *                      per GPU in a world ({@link EmulatedNicProvider#oneNicPerGpu()}). {@code false}: every WQE
 *                      completes in posting order, a doorbell rung before connect runs after it, an unreachable peer
 *                      fails at once (the lenient model, for comparing against).
 * @param writesPassCqe {@code false} (default): a CQE is written after the data its WQE landed in local memory.
 *                      {@code true}: like a NIC whose GPUDirect writes may pass their CQE (relaxed ordering, some
 *                      PCIe platforms), an RDMA READ's data is held back after its CQE is written, until the NIC
 *                      executes an atomic or a WQE that reads local memory (the PCIe flush: a non-posted operation
 *                      that posted writes cannot be passed by) or the QP has been idle for 20 ms; a WRITE's
 *                      data likewise lands in the target after its CQE (so "quiet, then signal by another path"
 *                      reads stale bytes), until a later WQE of its QP reaches the same memory or a flush there. The NIC then
 *                      reports {@code writesMayPassCqe}, so {@code quiet} ends with the PCIe flush; without it a get
 *                      returns stale bytes, and a test fails.
 * @param strictAtomics {@code true} (default): an ATOMIC_FA or ATOMIC_CS is what a NIC's atomic is to GPU memory, a
 *                      read, a pause of {@link #ATOMIC_SPLIT_NANOS} and a write, so a GPU atomic on the same word in
 *                      between is lost (NIC atomics stay atomic with each other); a counter that IBGDA peers and the
 *                      GPU add to loses updates, as on a ConnectX. {@code false}: a system-scope GPU atomic, which
 *                      hides that (the lenient model).
 * @param retryNanos    strict mode: how long a WQE toward a peer that does not answer (closed, not connected back,
 *                      not yet in RTR, in ERROR) keeps being retried before it fails with TRANSPORT_RETRY_EXC, as a
 *                      ConnectX retries {@code retry_cnt} times after each {@code timeout} (default
 *                      {@link #RETRY_DEFAULT}; tests make it short). The QP's later WQEs wait behind it; a peer that
 *                      comes up within the time is reached. Lenient mode fails such a WQE at once.
 */
public record EmulatedNicConfig(String idleStrategy, boolean startEngine, boolean strict, boolean writesPassCqe,
                                boolean strictAtomics, long retryNanos) {
    public static final String IDLE_PROP_NAME = "gda4j.emulatedNic.idle";
    public static final String IDLE_ENV = "GDA4J_EMULATED_NIC_IDLE";
    /** Never yields the core: lowest latency, one core busy for as long as the NIC is open. */
    public static final String IDLE_SPIN = "spin";
    /**
     * Spins 100k idle passes, yields 1k more, then parks from 1 us doubling to 100 us: a doorbell rung after a long
     * quiet spell waits up to 100 us longer.
     */
    public static final String IDLE_BACKOFF = "backoff";
    public static final String IDLE_DEFAULT = IDLE_SPIN;
    public static final String STRICT_PROP_NAME = "gda4j.emulatedNic.strict";
    public static final String STRICT_ENV = "GDA4J_EMULATED_NIC_STRICT";
    public static final String STRICT_DEFAULT = "true";
    public static final String WRITES_PASS_CQE_PROP_NAME = "gda4j.emulatedNic.writesPassCqe";
    public static final String WRITES_PASS_CQE_ENV = "GDA4J_EMULATED_NIC_WRITES_PASS_CQE";
    public static final String WRITES_PASS_CQE_DEFAULT = "false";
    public static final String STRICT_ATOMICS_PROP_NAME = "gda4j.emulatedNic.strictAtomics";
    public static final String STRICT_ATOMICS_ENV = "GDA4J_EMULATED_NIC_STRICT_ATOMICS";
    public static final String STRICT_ATOMICS_DEFAULT = "true";
    public static final String RETRY_PROP_NAME = "gda4j.emulatedNic.retryMillis";
    public static final String RETRY_ENV = "GDA4J_EMULATED_NIC_RETRY_MILLIS";
    /**
     * About what a ConnectX takes with gda4j's QP settings ({@code timeout} 14: 4.096 us * 2^14 = 67 ms, times
     * {@code retry_cnt} 7 + 1): an unreachable peer fails after about half a second, not at once.
     */
    public static final String RETRY_DEFAULT = "537";
    /**
     * Strict atomics: the pause between an atomic's read and its write, about a PCIe round trip (a ConnectX's atomic
     * on GPU memory is a non-posted read, then a posted write, some microseconds apart under load).
     */
    public static final long ATOMIC_SPLIT_NANOS = 2_000;

    public static final Setting<String> IDLE = Setting.of("emulated NIC engine idle", IDLE_PROP_NAME, IDLE_ENV,
            IDLE_DEFAULT, IDLE_SPIN + " (lowest latency, one core busy) or " + IDLE_BACKOFF, text -> {
                newIdleStrategy(text); // validates
                return text.strip().toLowerCase(Locale.ROOT);
            });
    public static final Setting<Boolean> STRICT = Setting.of("emulated NIC strict ordering",
            STRICT_PROP_NAME, STRICT_ENV, STRICT_DEFAULT, "true or false", EmulatedNicConfig::parseFlag);
    public static final Setting<Boolean> WRITES_PASS_CQE = Setting.of("emulated NIC writes pass CQE",
            WRITES_PASS_CQE_PROP_NAME, WRITES_PASS_CQE_ENV, WRITES_PASS_CQE_DEFAULT, "true or false",
            EmulatedNicConfig::parseFlag);

    public static final Setting<Boolean> STRICT_ATOMICS = Setting.of(
            "emulated NIC strict atomics",
            STRICT_ATOMICS_PROP_NAME, STRICT_ATOMICS_ENV, STRICT_ATOMICS_DEFAULT, "true or false",
            EmulatedNicConfig::parseFlag);

    public static final Setting<Long> RETRY = Setting.of("emulated NIC retry (ms)", RETRY_PROP_NAME,
            RETRY_ENV, RETRY_DEFAULT, "milliseconds, 0 or more", text -> {
                long ms = Long.parseLong(text.strip());
                if (ms < 0) {
                    throw new IllegalArgumentException("negative");
                }
                return ms;
            });

    /** Every emulated NIC setting, in the order {@code gda4j info} prints them. */
    public static final List<Setting<?>> SETTINGS = List.of(IDLE, STRICT, WRITES_PASS_CQE, STRICT_ATOMICS, RETRY);

    public EmulatedNicConfig {
        newIdleStrategy(idleStrategy); // validates
        if (retryNanos < 0) {
            throw new IllegalArgumentException("negative transport retry time " + retryNanos + " ns");
        }
    }

    /** The default transport retry time. */
    public EmulatedNicConfig(String idleStrategy, boolean startEngine, boolean strict, boolean writesPassCqe,
                             boolean strictAtomics) {
        this(idleStrategy, startEngine, strict, writesPassCqe, strictAtomics,
                TimeUnit.MILLISECONDS.toNanos(Long.parseLong(RETRY_DEFAULT)));
    }

    /** The same settings with another transport retry time (tests make it short, or long to watch a retry). */
    public EmulatedNicConfig withRetryNanos(long nanos) {
        return new EmulatedNicConfig(idleStrategy, startEngine, strict, writesPassCqe, strictAtomics, nanos);
    }

    /** A strict NIC (the default) whose CQEs follow their data. */
    public EmulatedNicConfig(String idleStrategy, boolean startEngine) {
        this(idleStrategy, startEngine, true);
    }

    /** CQEs follow their data (the default). */
    public EmulatedNicConfig(String idleStrategy, boolean startEngine, boolean strict) {
        this(idleStrategy, startEngine, strict, false);
    }

    /** Strict atomics (the default). */
    public EmulatedNicConfig(String idleStrategy, boolean startEngine, boolean strict, boolean writesPassCqe) {
        this(idleStrategy, startEngine, strict, writesPassCqe, true);
    }

    /** The pause the engine asks of each atomic: {@link #ATOMIC_SPLIT_NANOS} with strict atomics, else 0. */
    public long atomicSplitNanos() {
        return strictAtomics ? ATOMIC_SPLIT_NANOS : 0;
    }

    /** A fresh Agrona idle strategy for the engine thread. */
    public IdleStrategy newIdleStrategy() {
        return newIdleStrategy(idleStrategy);
    }

    private static IdleStrategy newIdleStrategy(String name) {
        switch (name.trim().toLowerCase(Locale.ROOT)) {
            case IDLE_SPIN:
                return new BusySpinIdleStrategy();
            case IDLE_BACKOFF:
                return new BackoffIdleStrategy(100_000, 1_000, 1_000, 100_000);
            default:
                throw new IllegalArgumentException(IDLE_ENV + "/" + IDLE_PROP_NAME + ": unknown idle strategy '" + name
                        + "': choose " + IDLE_SPIN + " or " + IDLE_BACKOFF);
        }
    }

    private static boolean parseFlag(String text) {
        String t = text.strip().toLowerCase(Locale.ROOT);
        if (!t.equals("true") && !t.equals("false")) {
            throw new IllegalArgumentException("not true or false");
        }
        return Boolean.parseBoolean(t);
    }

    public static EmulatedNicConfig resolve() {
        return resolve(System.getProperties(), System.getenv());
    }

    /** @throws io.gda4j.config.SettingException naming the variable or property of a bad value */
    public static EmulatedNicConfig resolve(Properties props, Map<String, String> env) {
        return new EmulatedNicConfig(IDLE.resolve(props, env), true, STRICT.resolve(props, env),
                WRITES_PASS_CQE.resolve(props, env), STRICT_ATOMICS.resolve(props, env),
                TimeUnit.MILLISECONDS.toNanos(RETRY.resolve(props, env)));
    }
}
