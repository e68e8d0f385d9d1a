package io.gda4j.world;

import io.gda4j.config.Setting;
import io.gda4j.config.SettingException;
import io.gda4j.hostflag.HostFlags;
import io.gda4j.transport.Transports;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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

    /** A host name of its own makes a process count as another host; the default is this machine's id. */
    @Test
    void aHostNameGivesTheProcessAHostIdOfItsOwn() {
        assertEquals("", WorldConfig.resolve(new Properties(), Map.of()).hostName());
        WorldConfig named = WorldConfig.resolve(new Properties(), Map.of(WorldConfig.HOST_NAME_ENV, " node-b "));
        assertEquals("node-b", named.hostName());
        assertEquals("node-b", named.toBuilder().build().hostName());
        assertArrayEquals(PeerCard.localHostId(), PeerCard.hostIdOf(""));
        assertFalse(java.util.Arrays.equals(PeerCard.hostIdOf("node-a"), PeerCard.hostIdOf("node-b")));
        assertFalse(java.util.Arrays.equals(PeerCard.localHostId(), PeerCard.hostIdOf(PeerCard.localHostName())),
                "a named host is never this machine, even under this machine's own name");
        assertArrayEquals(PeerCard.hostIdOf("node-a"), PeerCard.hostIdOf("node-a"));
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
        assertEquals(WorldConfig.HOST_FLAG_DEFAULT, HostFlags.Backend.AUTO.label());
    }

    @Test
    void badHostFlagNamesTheSettingAndTheChoices() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> WorldConfig.resolve(new Properties(), Map.of(WorldConfig.HOST_FLAG_ENV, "gdr")));
        assertEquals("GDA4J_HOST_FLAG=gdr is not valid: host flag backend must be one of auto, gdrcopy, stream-write, "
                + "mapped-pinned", e.getMessage());
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
    }

    @Test
    void everyBadValueIsASettingExceptionNamingWhereItCameFromAndWhatIsAccepted() {
        Map<String, String> bad = Map.of(WorldConfig.HEAP_SIZE_ENV, "abc", WorldConfig.WAIT_TIMEOUT_ENV, "-1",
                WorldConfig.GPUS_ENV, "abc", WorldConfig.HOST_FLAG_ENV, "nope", Transports.TRANSPORT_ENV,
                "carrier-pigeon");
        for (Map.Entry<String, String> e : bad.entrySet()) {
            SettingException x = assertThrows(SettingException.class,
                    () -> WorldConfig.resolve(new Properties(), Map.of(e.getKey(), e.getValue())), e.getKey());
            assertTrue(x.getMessage().startsWith(e.getKey() + "=" + e.getValue() + " is not valid: "),
                    x.getMessage());
            assertTrue(x.getMessage().contains(" must be "), x.getMessage());
            assertEquals(Setting.Source.ENVIRONMENT, x.source());
        }
        for (String tooLong : new String[] {"3000000000", "86400001", "0", "1.5"}) {
            assertThrows(SettingException.class,
                    () -> WorldConfig.resolve(new Properties(), Map.of(WorldConfig.WAIT_TIMEOUT_ENV, tooLong)), tooLong);
        }
        assertEquals(Duration.ofDays(1), WorldConfig.resolve(new Properties(),
                Map.of(WorldConfig.WAIT_TIMEOUT_ENV, "86400000")).waitTimeout());
        for (String heap : new String[] {"12", "0", "-8", "1.5g"}) {
            assertThrows(SettingException.class,
                    () -> WorldConfig.resolve(new Properties(), Map.of(WorldConfig.HEAP_SIZE_ENV, heap)), heap);
        }
        for (String gpus : new String[] {"0,,1", "0,", "-1", "0,x"}) {
            assertThrows(SettingException.class,
                    () -> WorldConfig.resolve(new Properties(), Map.of(WorldConfig.GPUS_ENV, gpus)), gpus);
        }
        Properties p = new Properties();
        p.setProperty(WorldConfig.HEAP_SIZE_PROP_NAME, "lots");
        SettingException x = assertThrows(SettingException.class,
                () -> WorldConfig.resolve(p, Map.of(WorldConfig.HEAP_SIZE_ENV, "1g")));
        assertEquals("-Dgda4j.heapSize=lots is not valid: symmetric heap size must be a positive multiple of 8 bytes with an"
                + " optional unit, e.g. 64MiB, 4k, 1g", x.getMessage(), "the property wins, so it is the one named");
    }

    @Test
    void blankValuesCountAsUnset() {
        Properties p = new Properties();
        p.setProperty(WorldConfig.HEAP_SIZE_PROP_NAME, " ");
        WorldConfig c = WorldConfig.resolve(p, Map.of(WorldConfig.HEAP_SIZE_ENV, "1g", WorldConfig.GPUS_ENV, ""));
        assertEquals(1L << 30, c.heapSizeBytes(), "a blank property leaves the environment in charge");
        assertTrue(c.gpus().isEmpty());
    }

    @Test
    void showNeverThrowsAndMarksTheBadValue() {
        Setting.Shown good = WorldConfig.HEAP_SIZE.show(name -> null, name -> null);
        assertTrue(good.valid());
        assertEquals("256 MiB", good.value());
        assertEquals(Setting.Source.DEFAULT, good.source());
        Setting.Shown bad = WorldConfig.GPUS.show(name -> null, Map.of(WorldConfig.GPUS_ENV, "a,b")::get);
        assertFalse(bad.valid());
        assertEquals("a,b", bad.value());
        assertTrue(bad.problem().startsWith("GDA4J_GPUS=a,b is not valid: GPUs of the ranks must be"), bad.problem());
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
