package io.gda4j.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import org.junit.jupiter.api.Test;

class DevicePointerTest {

    @Test
    void addressRoundTrips() {
        long address = 0x7f12_3456_7000L;
        assertEquals(address, DevicePointer.of(address).address());
        assertEquals(0L, DevicePointer.of(0).address());
        assertEquals(-1L, DevicePointer.of(-1L).address(), "all 64 bits survive");
    }

    @Test
    void plusBytesMovesWithoutChangingTheOriginal() {
        DevicePointer base = DevicePointer.of(0x1000);
        DevicePointer moved = base.plusBytes(0x28);
        assertEquals(0x1028, moved.address());
        assertEquals(0x1000, base.address());
        assertEquals(0x1010, moved.plusBytes(-0x18).address());
        assertEquals(0x1008, base.withByteOffset(8).address());
    }

    @Test
    void valueSemantics() {
        assertEquals(DevicePointer.of(0x40), DevicePointer.of(0x20).plusBytes(0x20));
        assertEquals(DevicePointer.of(0x40).hashCode(), DevicePointer.of(0x20).plusBytes(0x20).hashCode());
        assertNotEquals(DevicePointer.of(0x40), DevicePointer.of(0x48));
        assertEquals("DevicePointer[0xff]", DevicePointer.of(0xff).toString());
    }

    @Test
    void uuidFormatMatchesNvidiaSmi() {
        byte[] bytes = new byte[16];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) (0xf0 + i);
        }
        assertEquals("GPU-f0f1f2f3-f4f5-f6f7-f8f9-fafbfcfdfeff", CudaDevice.formatUuid(bytes));
    }
}
