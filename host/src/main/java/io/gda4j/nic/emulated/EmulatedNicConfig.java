package io.gda4j.nic.emulated;

import java.util.Map;
import java.util.Locale;
import java.util.Properties;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

/**
 * Settings of the emulated NIC, each with a system property, an environment variable and a default (a property beats
 * the environment, which beats the default).
 *
 * @param idleStrategy {@code spin} (default: lowest latency, one core busy while the NIC is open) or {@code backoff}
 * @param startEngine  whether the NIC runs its engine thread (tests drive {@link EmulatedEngine#doWork()} by hand)
 */
public record EmulatedNicConfig(String idleStrategy, boolean startEngine) {
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

    public EmulatedNicConfig {
        newIdleStrategy(idleStrategy); // validates
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

    public static EmulatedNicConfig resolve() {
        return resolve(System.getProperties(), System.getenv());
    }

    public static EmulatedNicConfig resolve(Properties props, Map<String, String> env) {
        String idle = props.getProperty(IDLE_PROP_NAME, env.getOrDefault(IDLE_ENV, IDLE_DEFAULT));
        return new EmulatedNicConfig(idle.trim(), true);
    }

    /** One line for {@code gda4j info}. */
    public String describe() {
        return String.format("emulated NIC idle  %s  (%s / -D%s)%n", idleStrategy, IDLE_ENV, IDLE_PROP_NAME);
    }
}
