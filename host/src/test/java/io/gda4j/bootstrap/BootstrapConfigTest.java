package io.gda4j.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.config.SettingException;

import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The bootstrap's time limits as settings: environment, system property, default, and bad values. */
@Timeout(10)
class BootstrapConfigTest {
    private static final LaunchEnvironment ENV = LaunchEnvironment.parse(Map.of(LaunchEnvironment.GDA4J_RANK, "1",
            LaunchEnvironment.GDA4J_WORLD_SIZE, "2", LaunchEnvironment.GDA4J_ROOT, "127.0.0.1:29600",
            LaunchEnvironment.GDA4J_JOB_TOKEN, "a-long-enough-token-0123456789"));

    private static BootstrapConfig resolve(Map<String, String> props, Map<String, String> env) {
        return BootstrapConfig.of(ENV, props::get, env::get);
    }

    @Test
    void theDefaultsApplyWhenNothingIsSet() {
        BootstrapConfig c = resolve(Map.of(), Map.of());
        assertEquals(BootstrapConfig.DEFAULT_JOIN_TIMEOUT_MILLIS, c.joinTimeoutMillis());
        assertEquals(BootstrapConfig.DEFAULT_COLLECTIVE_TIMEOUT_MILLIS, c.collectiveTimeoutMillis());
        assertEquals(BootstrapConfig.DEFAULT_DEAD_AFTER_MILLIS, c.deadAfterMillis());
        assertEquals(1, c.rank());
        assertEquals(2, c.worldSize());
    }

    @Test
    void theEnvironmentSetsEachLimitAndAPropertyBeatsIt() {
        BootstrapConfig c = resolve(Map.of(BootstrapConfig.COLLECTIVE_TIMEOUT_PROP_NAME, "7000"), Map.of(
                BootstrapConfig.JOIN_TIMEOUT_ENV, "120000", BootstrapConfig.COLLECTIVE_TIMEOUT_ENV, "5000",
                BootstrapConfig.DEAD_AFTER_ENV, "30000"));
        assertEquals(120_000, c.joinTimeoutMillis());
        assertEquals(7_000, c.collectiveTimeoutMillis());
        assertEquals(30_000, c.deadAfterMillis());
    }

    @Test
    void aBadValueNamesItsVariable() {
        SettingException e = assertThrows(SettingException.class,
                () -> resolve(Map.of(), Map.of(BootstrapConfig.JOIN_TIMEOUT_ENV, "soon")));
        assertTrue(e.getMessage().startsWith(BootstrapConfig.JOIN_TIMEOUT_ENV + "=soon is not valid"), e.getMessage());
        // dead-after must exceed the heartbeat interval, or every peer would be dead between two heartbeats
        e = assertThrows(SettingException.class,
                () -> resolve(Map.of(BootstrapConfig.DEAD_AFTER_PROP_NAME, "500"), Map.of()));
        assertTrue(e.getMessage().startsWith("-D" + BootstrapConfig.DEAD_AFTER_PROP_NAME + "=500 is not valid"),
                e.getMessage());
    }
}
