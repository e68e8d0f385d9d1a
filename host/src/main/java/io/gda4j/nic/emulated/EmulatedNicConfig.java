package io.gda4j.nic.emulated;

import java.util.Map;
import java.util.Properties;

/**
 * Settings of the emulated NIC, each with a system property, an environment variable and a default (a property beats
 * the environment, which beats the default).
 *
 * @param idleStrategy {@code spin} (default: lowest latency, one core busy while the NIC is open) or {@code backoff}
 * @param startEngine  whether the NIC runs its engine thread (tests drive {@link EmulatedEngine#doWork()} by hand)
 * @param strict       {@code true} (default): the NIC guarantees no more than a ConnectX does, so code that relies on
 *                     more fails a test: a WQE without the fence bit runs before an earlier RDMA READ's data has
 *                     landed ({@link EmulatedEngine}). {@code false}: every WQE completes in posting order (the
 *                     lenient model, for comparing against).
 */
public record EmulatedNicConfig(String idleStrategy, boolean startEngine, boolean strict) {
    public static final String IDLE_PROP_NAME = "gda4j.emulatedNic.idle";
    public static final String IDLE_ENV = "GDA4J_EMULATED_NIC_IDLE";
    public static final String IDLE_DEFAULT = "spin";
    public static final String STRICT_PROP_NAME = "gda4j.emulatedNic.strict";
    public static final String STRICT_ENV = "GDA4J_EMULATED_NIC_STRICT";
    public static final String STRICT_DEFAULT = "true";

    public EmulatedNicConfig {
        IdleStrategy.named(idleStrategy); // validates
    }

    /** A strict NIC (the default). */
    public EmulatedNicConfig(String idleStrategy, boolean startEngine) {
        this(idleStrategy, startEngine, true);
    }

    public static EmulatedNicConfig resolve() {
        return resolve(System.getProperties(), System.getenv());
    }

    public static EmulatedNicConfig resolve(Properties props, Map<String, String> env) {
        String idle = props.getProperty(IDLE_PROP_NAME, env.getOrDefault(IDLE_ENV, IDLE_DEFAULT));
        String strict = props.getProperty(STRICT_PROP_NAME, env.getOrDefault(STRICT_ENV, STRICT_DEFAULT)).trim();
        if (!strict.equals("true") && !strict.equals("false")) {
            throw new IllegalArgumentException(STRICT_ENV + " / -D" + STRICT_PROP_NAME + " must be true or false, not '"
                    + strict + "'");
        }
        return new EmulatedNicConfig(idle.trim(), true, Boolean.parseBoolean(strict));
    }

    /** One line for {@code gda4j info}. */
    public String describe() {
        return String.format("emulated NIC idle  %s  (%s / -D%s)%nemulated NIC strict  %s  (%s / -D%s)%n",
                idleStrategy, IDLE_ENV, IDLE_PROP_NAME, strict, STRICT_ENV, STRICT_PROP_NAME);
    }
}
