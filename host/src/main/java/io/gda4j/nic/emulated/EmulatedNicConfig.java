package io.gda4j.nic.emulated;

import io.gda4j.config.Setting;

import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * Settings of the emulated NIC, each with a system property, an environment variable and a default (a property beats
 * the environment, which beats the default: {@link Setting}).
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

    public static final Setting<String> IDLE = Setting.of("emulated NIC engine idle", IDLE_PROP_NAME, IDLE_ENV,
            IDLE_DEFAULT, "spin (lowest latency, one core busy) or backoff", text -> {
                IdleStrategy.named(text); // validates
                return text.strip().toLowerCase(java.util.Locale.ROOT);
            });

    public static final Setting<Boolean> STRICT = Setting.of("emulated NIC strict (no more than a ConnectX promises)",
            STRICT_PROP_NAME, STRICT_ENV, STRICT_DEFAULT, "true or false", text -> {
                String t = text.strip().toLowerCase(java.util.Locale.ROOT);
                if (!t.equals("true") && !t.equals("false")) {
                    throw new IllegalArgumentException("not true or false");
                }
                return Boolean.parseBoolean(t);
            });

    /** Every emulated NIC setting, in the order {@code gda4j info} prints them. */
    public static final List<Setting<?>> SETTINGS = List.of(IDLE, STRICT);

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

    /** @throws io.gda4j.config.SettingException naming the variable or property of a bad value */
    public static EmulatedNicConfig resolve(Properties props, Map<String, String> env) {
        return new EmulatedNicConfig(IDLE.resolve(props, env), true, STRICT.resolve(props, env));
    }
}
