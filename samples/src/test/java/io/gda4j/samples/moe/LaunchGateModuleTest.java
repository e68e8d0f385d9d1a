package io.gda4j.samples.moe;

import io.gda4j.cuda.ModuleImage;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The gate's committed PTX is where LaunchGate looks, and declares the kernels with the arguments it passes. */
class LaunchGateModuleTest {
    @Test
    void theGateModuleIsOnTheClassPathWithItsKernels() {
        ModuleImage image = ModuleImage.classPathResource(LaunchGate.RESOURCE, LaunchGate.class.getClassLoader());
        assertEquals("launch_gate", image.name());
        assertEquals(ModuleImage.Kind.PTX, image.kind());
        String ptx = new String(image.bytes(), StandardCharsets.US_ASCII);
        // hold() passes the host word's device pointer, the step it waits for and the timeout: three 64-bit values
        assertEquals(3, u64Params(ptx, LaunchGate.KERNEL), "the gate's u64 parameters");
        // ... and, for the start line, the rank's view, the arrivals word's offset and the status and seen pointers
        assertEquals(7, u64Params(ptx, LaunchGate.START_LINE_KERNEL), "the start line's u64 parameters");
    }

    private static int u64Params(String ptx, String kernel) {
        String entry = ".entry " + kernel + "(";
        assertTrue(ptx.contains(entry), kernel + " is declared");
        String params = ptx.substring(ptx.indexOf(entry) + entry.length()).split("\\)", 2)[0];
        assertEquals(params.split(".param ", -1).length, params.split(".param .u64", -1).length,
                kernel + " takes only u64 parameters");
        return params.split(".param .u64", -1).length - 1;
    }
}
