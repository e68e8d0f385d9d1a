package io.gda4j.cuda;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The reusable pointer carries exactly the address it was given, the way JCuda will read it (base + offset). */
class MutableDevicePointerTest {
    @Test
    void setMovesTheAddressWithoutANewObject() {
        MutableDevicePointer p = new MutableDevicePointer();
        assertEquals(0L, p.address());
        for (long a : new long[] {0x7f00_0000_0000L, 1L, Long.MAX_VALUE, 0x7f00_0000_0040L}) {
            assertEquals(a, p.set(a).address());
            // What JCuda's native side reads: the native base plus the byte offset.
            assertEquals(a, DevicePointer.of(0).address() + p.address());
        }
        assertEquals("MutableDevicePointer[0x7f0000000040]", p.toString());
    }
}
