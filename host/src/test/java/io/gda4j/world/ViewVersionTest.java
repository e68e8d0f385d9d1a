package io.gda4j.world;

import io.gda4j.cuda.ModuleImage;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Modules carry the view version of the headers they were built with (an empty kernel whose name holds it), and a
 * module built for another version is refused before it is loaded. No GPU needed: this reads module images.
 */
class ViewVersionTest {
    private static final String PTX_HEAD = ".version 9.0\n.target sm_90\n.address_size 64\n";

    private static ModuleImage ptxWithVersion(int version) {
        String ptx = PTX_HEAD + ".visible .entry _ZN5gda4j18gda4j_view_versionILj" + version + "EEEvv()\n{\n ret;\n}\n"
                + ".visible .entry user_kernel(.param .u64 v)\n{\n ret;\n}\n";
        return ModuleImage.bytes("user", ptx.getBytes(StandardCharsets.US_ASCII));
    }

    @Test
    void theToolkitsModulesDeclareTheVersionThisHostWrites() {
        for (String name : new String[] {"ops", "bench", "bench_ibgda", "ibgda", "hostflag", "emulated_nic"}) {
            assertEquals(Set.of(DeviceViewDescriptor.VIEW_VERSION),
                    DeviceViewDescriptor.declaredViewVersions(ModuleImage.resource(name)), name);
            DeviceViewDescriptor.requireBuiltForThisView(ModuleImage.resource(name));
        }
        // A module that does not include the view headers declares nothing and passes.
        ModuleImage plain = ModuleImage.bytes("plain", (PTX_HEAD + ".visible .entry k()\n{\n ret;\n}\n")
                .getBytes(StandardCharsets.US_ASCII));
        assertEquals(Set.of(), DeviceViewDescriptor.declaredViewVersions(plain));
        DeviceViewDescriptor.requireBuiltForThisView(plain);
    }

    @Test
    void aModuleBuiltForAnotherVersionIsRefusedWithWhatToDo() {
        DeviceViewDescriptor.requireBuiltForThisView(ptxWithVersion(DeviceViewDescriptor.VIEW_VERSION));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> DeviceViewDescriptor.requireBuiltForThisView(ptxWithVersion(DeviceViewDescriptor.VIEW_VERSION + 1)));
        assertTrue(e.getMessage().contains("view version " + (DeviceViewDescriptor.VIEW_VERSION + 1)), e.getMessage());
        assertTrue(e.getMessage().contains("writes view version " + DeviceViewDescriptor.VIEW_VERSION), e.getMessage());
        assertTrue(e.getMessage().contains("-I <gda4j>/device-ptx/include"), e.getMessage());
        assertTrue(e.getMessage().contains("module user"), e.getMessage());
    }

    @Test
    void cubinsAreReadByTheirSymbolNames() {
        byte[] elf = ("\u007fELF\u0002\u0001\u0001\u0000 .text._ZN5gda4j18gda4j_view_versionILj" + 42 + "EEEvv\u0000")
                .getBytes(StandardCharsets.ISO_8859_1);
        ModuleImage cubin = ModuleImage.bytes("mine", elf);
        assertEquals(ModuleImage.Kind.CUBIN, cubin.kind());
        assertEquals(Set.of(42), DeviceViewDescriptor.declaredViewVersions(cubin));
        assertThrows(IllegalArgumentException.class, () -> DeviceViewDescriptor.requireBuiltForThisView(cubin));
    }
}
