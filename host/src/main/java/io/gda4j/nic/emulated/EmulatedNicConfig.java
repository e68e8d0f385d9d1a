package io.gda4j.nic.emulated;

import java.util.Map;
import java.util.Properties;

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
    public static final String IDLE_DEFAULT = "spin";

    public EmulatedNicConfig {
        IdleStrategy.named(idleStrategy); // validates
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
