package io.gda4j.samples.moe;

import io.gda4j.cuda.ModuleImage;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The gate's committed PTX is where LaunchGate looks, and declares the kernel with the arguments it passes. */
class LaunchGateModuleTest {
    @Test
    void theGateModuleIsOnTheClassPathWithItsKernel() {
        ModuleImage image = ModuleImage.classPathResource(LaunchGate.RESOURCE, LaunchGate.class.getClassLoader());
        assertEquals("launch_gate", image.name());
        assertEquals(ModuleImage.Kind.PTX, image.kind());
        String ptx = new String(image.bytes(), StandardCharsets.US_ASCII);
        // hold() passes the host word's device pointer, the step it waits for and the timeout: three 64-bit values
        assertTrue(ptx.contains(".entry " + LaunchGate.KERNEL + "("), "the kernel hold() launches is declared");
        int params = ptx.substring(ptx.indexOf(".entry " + LaunchGate.KERNEL + "(")).split("\\)", 2)[0]
                .split(".param .u64", -1).length - 1;
        assertEquals(3, params, "three u64 parameters");
    }
}
