package io.gda4j.ibgda;

import io.gda4j.mlx5.RequiresCompilers;
import io.gda4j.world.HeaderValues;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Path;
import java.util.Map;

/** DeviceQpDescriptor against transport/ibgda/device_qp.cuh's struct DeviceQp, compiled with g++: every offset and flag. */
@RequiresCompilers(tools = "g++")
class DeviceQpLayoutTest {
    static Map<String, Long> header;

    @BeforeAll
    static void compileAndRun(@TempDir Path tmp) throws IOException, InterruptedException {
        header = HeaderValues.of("ibgda_layout.cpp", tmp);
    }

    @Test
    void everyDescriptorConstantMatchesTheHeader() throws IllegalAccessException {
        int checked = 0;
        for (Field f : DeviceQpDescriptor.class.getFields()) {
            if (!Modifier.isStatic(f.getModifiers()) || f.getType() != int.class || f.getName().equals("ALIGNMENT")) {
                continue;
            }
            Long h = header.get(f.getName());
            assertNotNull(h, f.getName() + " is not printed by ibgda_layout.cpp (add it there)");
            long javaValue = f.getInt(null) & 0xffffffffL;
            assertEquals(h.longValue(), javaValue,
                    f.getName() + ": device_qp.cuh says " + h + ", Java says " + javaValue);
            checked++;
        }
        assertEquals(header.keySet().stream().filter(k -> !k.startsWith("CODE.")).count(), checked,
                "ibgda_layout.cpp prints a name DeviceQpDescriptor lacks");
    }

    /** The back end's error codes (device_qp.cuh) against the decoder that words them, each by its name. */
    @Test
    void errorCodesMatchTheDecoder() {
        java.util.Map<Integer, String> codes = new IbgdaErrorDecoder().codes();
        assertEquals(codes.size(), header.keySet().stream().filter(k -> k.startsWith("CODE.")).count());
        codes.forEach((value, name) -> assertEquals(Long.valueOf(value), header.get("CODE." + name), name));
    }

    @Test
    void stateLinesStartOnTheirOwnCacheLines() {
        assertEquals(0, DeviceQpDescriptor.RESV_HEAD_OFFSET % 64);
        assertEquals(0, DeviceQpDescriptor.CONS_HEAD_OFFSET % 64);
        assertEquals(0, DeviceQpDescriptor.LENGTH % DeviceQpDescriptor.ALIGNMENT);
    }

    @Test
    void errorWordIsNeverZero() {
        assertEquals(DeviceQpDescriptor.ERROR_SET, DeviceQpDescriptor.errorWord(0, 0, 0));
        assertEquals(0x800d8813, DeviceQpDescriptor.errorWord(0x13, 0x88, 13));
    }

}
