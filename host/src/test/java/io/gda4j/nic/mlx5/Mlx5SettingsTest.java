package io.gda4j.nic.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.config.SettingException;
import io.gda4j.nic.NicOptions;
import io.gda4j.verbs.VerbsConstants;

import java.util.Map;

import org.junit.jupiter.api.Test;

/** Property, else environment, else default; and the GID index rule. */
class Mlx5SettingsTest {
    static Mlx5Settings parse(Map<String, String> properties, Map<String, String> environment) {
        return Mlx5Settings.parse(properties::get, environment::get);
    }

    @Test
    void defaults() {
        Mlx5Settings s = parse(Map.of(), Map.of());
        assertEquals(new Mlx5Settings(Mlx5Settings.GID_AUTO, VerbsConstants.IBV_MTU_4096, false, true), s);
        assertEquals("mlx5 settings: gda4j.mlx5.gidIndex=auto, gda4j.mlx5.mtu=4096, gda4j.mlx5.relaxedOrdering=false,"
                + " gda4j.mlx5.dmabuf=auto", s.toString());
    }

    @Test
    void propertyBeatsEnvironment() {
        Mlx5Settings s = parse(Map.of("gda4j.mlx5.gidIndex", "3", "gda4j.mlx5.mtu", "1024"),
                Map.of("GDA4J_MLX5_GID_INDEX", "5", "GDA4J_MLX5_RELAXED_ORDERING", "true", "GDA4J_MLX5_DMABUF", "off"));
        assertEquals(3, s.gidIndex());
        assertEquals(VerbsConstants.IBV_MTU_1024, s.maxPathMtu());
        assertTrue(s.relaxedOrdering());
        assertFalse(s.dmabuf());
    }

    @Test
    void gidIndexFromSettingsThenOptionsThenAuto() {
        Mlx5Settings auto = parse(Map.of(), Map.of());
        assertEquals(Mlx5Settings.GID_AUTO, auto.gidIndexFor(NicOptions.defaults()), "0 from defaults() means choose");
        assertEquals(3, auto.gidIndexFor(new NicOptions(null, 1, 3)));
        Mlx5Settings zero = parse(Map.of("gda4j.mlx5.gidIndex", "0"), Map.of());
        assertEquals(0, zero.gidIndexFor(new NicOptions(null, 1, 3)), "an explicit setting wins, 0 included");
    }

    @Test
    void rejectsNonsenseWithTheNameOfTheSetting() {
        assertEquals("-Dgda4j.mlx5.gidIndex=-2 is not valid: mlx5 RoCE GID index must be auto or a GID index from 0"
                + " (show_gids lists them)",
                assertThrows(SettingException.class, () -> parse(Map.of("gda4j.mlx5.gidIndex", "-2"), Map.of()))
                        .getMessage());
        assertTrue(assertThrows(SettingException.class, () -> parse(Map.of("gda4j.mlx5.mtu", "9000"), Map.of()))
                .getMessage().startsWith("-Dgda4j.mlx5.mtu=9000 is not valid: mlx5 largest path MTU (bytes) must be one of 256,"
                        + " 512, 1024, 2048, 4096"));
        assertEquals("GDA4J_MLX5_RELAXED_ORDERING=maybe is not valid: mlx5 relaxed ordering must be true or false (also 1/0,"
                + " yes/no, on/off)", assertThrows(SettingException.class,
                () -> parse(Map.of(), Map.of("GDA4J_MLX5_RELAXED_ORDERING", "maybe"))).getMessage());
        assertThrows(SettingException.class, () -> parse(Map.of(), Map.of("GDA4J_MLX5_DMABUF", "always")));
    }
}
