package io.gda4j.world;

import io.gda4j.hostflag.HostFlags;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class WorldConfigTest {
    @Test
    void defaultsApplyWhenNothingIsSet() {
        WorldConfig c = WorldConfig.resolve(new Properties(), Map.of());
        assertEquals(256L << 20, c.heapSizeBytes());
        assertEquals(Duration.ofSeconds(10), c.waitTimeout());
        assertEquals("auto", c.transport());
        assertTrue(c.gpus().isEmpty());
        assertEquals(HostFlags.Backend.AUTO, c.hostFlag());
        assertEquals(HostFlags.Backend.AUTO, WorldConfig.builder().build().hostFlag());
    }

    @Test
    void hostFlagComesFromPropertyThenEnvironment() {
        assertEquals(HostFlags.Backend.STREAM_WRITE, WorldConfig.resolve(new Properties(),
                Map.of(WorldConfig.HOST_FLAG_ENV, "stream-write")).hostFlag());
        Properties p = new Properties();
        p.setProperty(WorldConfig.HOST_FLAG_PROP_NAME, " Mapped-Pinned ");
        WorldConfig c = WorldConfig.resolve(p, Map.of(WorldConfig.HOST_FLAG_ENV, "gdrcopy"));
        assertEquals(HostFlags.Backend.MAPPED_PINNED, c.hostFlag());
        assertEquals(HostFlags.Backend.MAPPED_PINNED, c.toBuilder().build().hostFlag(), "toBuilder keeps it");
        assertEquals(HostFlags.Backend.GDRCOPY, WorldConfig.resolve(new Properties(),
                Map.of(WorldConfig.HOST_FLAG_ENV, "gdrcopy")).hostFlag(), "forcing gdrcopy is a valid setting");
        assertTrue(c.describe().contains("host flag     mapped-pinned  (GDA4J_HOST_FLAG / -Dgda4j.hostFlag)"),
                c.describe());
        assertEquals(WorldConfig.HOST_FLAG_DEFAULT, HostFlags.Backend.AUTO.label());
    }

    @Test
    void badHostFlagNamesTheSettingAndTheChoices() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> WorldConfig.resolve(new Properties(), Map.of(WorldConfig.HOST_FLAG_ENV, "gdr")));
        assertEquals("GDA4J_HOST_FLAG/gda4j.hostFlag: unknown host flag backend 'gdr': choose one of auto, gdrcopy, "
                + "stream-write, mapped-pinned", e.getMessage());
        assertThrows(NullPointerException.class, () -> WorldConfig.builder().hostFlag(null));
    }

    @Test
    void propertyBeatsEnvironmentBeatsDefault() {
        Properties p = new Properties();
        p.setProperty(WorldConfig.WAIT_TIMEOUT_PROP_NAME, "250");
        WorldConfig c = WorldConfig.resolve(p, Map.of(WorldConfig.WAIT_TIMEOUT_ENV, "999",
                WorldConfig.HEAP_SIZE_ENV, "1g", WorldConfig.GPUS_ENV, "0, 0,1"));
        assertEquals(Duration.ofMillis(250), c.waitTimeout());
        assertEquals(1L << 30, c.heapSizeBytes());
        assertEquals(List.of(0, 0, 1), c.gpus());
        assertTrue(c.describe().contains(WorldConfig.HEAP_SIZE_ENV));
    }

    @Test
    void badValuesAreRejectedWithTheSettingName() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> WorldConfig.resolve(new Properties(), Map.of(WorldConfig.WAIT_TIMEOUT_ENV, "ten")));
        assertTrue(e.getMessage().contains(WorldConfig.WAIT_TIMEOUT_ENV), e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> WorldConfig.resolve(new Properties(), Map.of(WorldConfig.GPUS_ENV, "0,x")));
        assertThrows(IllegalArgumentException.class, () -> WorldConfig.builder().heapSizeBytes(12).build());
        assertThrows(IllegalArgumentException.class, () -> WorldConfig.builder().waitTimeout(Duration.ZERO).build());
        assertThrows(IllegalArgumentException.class, () -> WorldConfig.builder().gpus(List.of(-1)).build());
    }

    @Test
    void byteSizesParseAndFormat() {
        assertEquals(8, ByteSize.parse("8"));
        assertEquals(4096, ByteSize.parse("4k"));
        assertEquals(4096, ByteSize.parse("4KiB"));
        assertEquals(1L << 20, ByteSize.parse(" 1m "));
        assertEquals(256L << 20, ByteSize.parse("256MiB"));
        assertEquals(2L << 30, ByteSize.parse("2g"));
        assertEquals("256 MiB", ByteSize.format(256L << 20));
        assertEquals("1536 B", ByteSize.format(1536));
        assertEquals("4 KiB", ByteSize.format(4096));
        for (String bad : new String[] {"", "k", "-1", "1.5m", "12q", "99999999999999999999"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ByteSize.parse(bad), bad);
            assertTrue(e.getMessage().contains(bad.trim()) || bad.isEmpty(), e.getMessage());
        }
    }
}
