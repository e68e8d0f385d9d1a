package io.gda4j.gdrcopy;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;

class GdrcopyConfigTest {

    @Test
    void defaultsTryTheSonameThenThePlainName() {
        GdrcopyConfig config = GdrcopyConfig.from(new Properties());
        assertEquals(List.of("libgdrapi.so.2", "gdrapi"), config.libraryCandidates());
        assertEquals(Path.of("/dev/gdrdrv"), config.deviceNode());
        assertEquals("libgdrapi.so.2", config.libraryName());
    }

    @Test
    void propertiesOverrideAndDisableTheFallback() {
        Properties properties = new Properties();
        properties.setProperty(GdrcopyConfig.LIBRARY_PROP_NAME, " /opt/gdrcopy/lib/libgdrapi.so.2 ");
        properties.setProperty(GdrcopyConfig.DEVICE_PROP_NAME, "/tmp/no-gdrdrv");
        GdrcopyConfig config = GdrcopyConfig.from(properties);
        assertEquals(List.of("/opt/gdrcopy/lib/libgdrapi.so.2"), config.libraryCandidates());
        assertEquals(Path.of("/tmp/no-gdrdrv"), config.deviceNode());
    }

    @Test
    void propertyNamesAreTheDocumentedOnes() {
        assertEquals("gda4j.gdrcopy.library", GdrcopyConfig.LIBRARY_PROP_NAME);
        assertEquals("gda4j.gdrcopy.device", GdrcopyConfig.DEVICE_PROP_NAME);
    }
}
