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
 * @param writesPassCqe {@code false} (default): a CQE is written after the data its WQE landed in local memory.
 *                     {@code true}: like a NIC whose GPUDirect writes may pass their CQE (relaxed ordering, some
 *                     PCIe platforms), an RDMA READ's data is held back after its CQE is written, until the NIC
 *                     executes an atomic or a WQE that reads local memory (the PCIe flush: a non-posted operation
 *                     that posted writes cannot be passed by) or the QP has been idle for a millisecond. The NIC then
 *                     reports {@code writesMayPassCqe}, so {@code quiet} ends with the PCIe flush; without it a get
 *                     returns stale bytes, and a test fails.
 */
public record EmulatedNicConfig(String idleStrategy, boolean startEngine, boolean strict, boolean writesPassCqe) {
    public static final String IDLE_PROP_NAME = "gda4j.emulatedNic.idle";
    public static final String IDLE_ENV = "GDA4J_EMULATED_NIC_IDLE";
    public static final String IDLE_DEFAULT = "spin";
    public static final String STRICT_PROP_NAME = "gda4j.emulatedNic.strict";
    public static final String STRICT_ENV = "GDA4J_EMULATED_NIC_STRICT";
    public static final String STRICT_DEFAULT = "true";
    public static final String WRITES_PASS_CQE_PROP_NAME = "gda4j.emulatedNic.writesPassCqe";
    public static final String WRITES_PASS_CQE_ENV = "GDA4J_EMULATED_NIC_WRITES_PASS_CQE";
    public static final String WRITES_PASS_CQE_DEFAULT = "false";

    public EmulatedNicConfig {
        IdleStrategy.named(idleStrategy); // validates
    }

    /** A strict NIC (the default) whose CQEs follow their data. */
    public EmulatedNicConfig(String idleStrategy, boolean startEngine) {
        this(idleStrategy, startEngine, true);
    }

    /** CQEs follow their data (the default). */
    public EmulatedNicConfig(String idleStrategy, boolean startEngine, boolean strict) {
        this(idleStrategy, startEngine, strict, false);
    }

    public static EmulatedNicConfig resolve() {
        return resolve(System.getProperties(), System.getenv());
    }

    public static EmulatedNicConfig resolve(Properties props, Map<String, String> env) {
        String idle = props.getProperty(IDLE_PROP_NAME, env.getOrDefault(IDLE_ENV, IDLE_DEFAULT));
        boolean strict = flag(props, env, STRICT_PROP_NAME, STRICT_ENV, STRICT_DEFAULT);
        boolean writesPassCqe = flag(props, env, WRITES_PASS_CQE_PROP_NAME, WRITES_PASS_CQE_ENV,
                WRITES_PASS_CQE_DEFAULT);
        return new EmulatedNicConfig(idle.trim(), true, strict, writesPassCqe);
    }

    private static boolean flag(Properties props, Map<String, String> env, String prop, String envName, String def) {
        String value = props.getProperty(prop, env.getOrDefault(envName, def)).trim();
        if (!value.equals("true") && !value.equals("false")) {
            throw new IllegalArgumentException(envName + " / -D" + prop + " must be true or false, not '" + value + "'");
        }
        return Boolean.parseBoolean(value);
    }

    /** One line for {@code gda4j info}. */
    public String describe() {
        return String.format("emulated NIC idle  %s  (%s / -D%s)%nemulated NIC strict  %s  (%s / -D%s)%n",
                idleStrategy, IDLE_ENV, IDLE_PROP_NAME, strict, STRICT_ENV, STRICT_PROP_NAME)
                + String.format("emulated NIC writes pass CQE  %s  (%s / -D%s)%n", writesPassCqe,
                WRITES_PASS_CQE_ENV, WRITES_PASS_CQE_PROP_NAME);
    }
}
