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
 */
public record EmulatedNicConfig(String idleStrategy, boolean startEngine) {
    public static final String IDLE_PROP_NAME = "gda4j.emulatedNic.idle";
    public static final String IDLE_ENV = "GDA4J_EMULATED_NIC_IDLE";
    public static final String IDLE_DEFAULT = "spin";

    public static final Setting<String> IDLE = Setting.of("emulated NIC engine idle", IDLE_PROP_NAME, IDLE_ENV,
            IDLE_DEFAULT, "spin (lowest latency, one core busy) or backoff", text -> {
                IdleStrategy.named(text); // validates
                return text.strip().toLowerCase(java.util.Locale.ROOT);
            });

    /** Every emulated NIC setting, in the order {@code gda4j info} prints them. */
    public static final List<Setting<?>> SETTINGS = List.of(IDLE);

    public EmulatedNicConfig {
        IdleStrategy.named(idleStrategy); // validates
    }

    public static EmulatedNicConfig resolve() {
        return resolve(System.getProperties(), System.getenv());
    }

    /** @throws io.gda4j.config.SettingException naming the variable or property of a bad value */
    public static EmulatedNicConfig resolve(Properties props, Map<String, String> env) {
        return new EmulatedNicConfig(IDLE.resolve(props, env), true);
    }
}
