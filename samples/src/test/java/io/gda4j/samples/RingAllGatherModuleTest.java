package io.gda4j.samples;

import io.gda4j.cuda.ModuleImage;
import io.gda4j.world.DeviceViewDescriptor;

import org.junit.jupiter.api.Test;

import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The sample's committed PTX is found where RingAllGather looks and was built with this gda4j's headers. */
class RingAllGatherModuleTest {
    @Test
    void theSampleModuleIsOnTheClassPathAndMatchesThisView() {
        ModuleImage image = ModuleImage.classPathResource(RingAllGather.RESOURCE, RingAllGather.class.getClassLoader());
        assertEquals("ring_allgather", image.name());
        assertEquals(ModuleImage.Kind.PTX, image.kind());
        assertEquals(Set.of(DeviceViewDescriptor.VIEW_VERSION), DeviceViewDescriptor.declaredViewVersions(image));
        assertTrue(new String(image.bytes(), java.nio.charset.StandardCharsets.US_ASCII)
                .contains(".entry " + RingAllGather.KERNEL + "("), "the kernel the driver launches is declared");
    }
}
