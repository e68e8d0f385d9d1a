package io.gda4j.cuda;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class KernelArgsTest {

    @Test
    void buildsCountsAndLists() {
        KernelArgs args = KernelArgs.create()
                .pointer(DevicePointer.of(0x7f00_0000_0000L))
                .address(0x10)
                .i32(-5)
                .u32(-1)
                .i64(-7L)
                .u64(-1L)
                .f32(1.5f)
                .f64(0.25);
        assertEquals(8, args.count());
        assertEquals("[ptr 0x7f0000000000, addr 0x10, i32 -5, u32 4294967295, i64 -7, u64 18446744073709551615,"
                + " f32 1.5, f64 0.25]", args.toString());
        assertEquals(8, args.sizeBytes(0));
        assertEquals(4, args.sizeBytes(2));
        assertEquals(4, args.sizeBytes(6));
        assertNotNull(args.toPointer());
    }

    @Test
    void growsPastInitialCapacity() {
        KernelArgs args = KernelArgs.create();
        for (int i = 0; i < 40; i++) {
            args.i32(i);
        }
        assertEquals(40, args.count());
        assertTrue(args.toString().endsWith("i32 39]"));
    }

    @Test
    void emptyList() {
        KernelArgs args = KernelArgs.create();
        assertEquals(0, args.count());
        assertEquals("[]", args.toString());
    }

    @Test
    void rejectsNullPointer() {
        assertThrows(NullPointerException.class, () -> KernelArgs.create().pointer(null));
    }

    @Test
    void argumentsAreCheckedAgainstThePtxSignature() {
        int[] sizes = {8, 4, 8};
        assertDoesNotThrow(() -> Kernel.checkArguments("k", sizes,
                KernelArgs.create().pointer(DevicePointer.of(1)).u32(2).i64(3)));
        assertDoesNotThrow(() -> Kernel.checkArguments("k", null, KernelArgs.create()));
        assertDoesNotThrow(() -> Kernel.checkArguments("k", new int[] {-1}, KernelArgs.create().i32(1)));

        IllegalArgumentException tooFew = assertThrows(IllegalArgumentException.class,
                () -> Kernel.checkArguments("k", sizes, KernelArgs.create().pointer(DevicePointer.of(1))));
        assertTrue(tooFew.getMessage().contains("kernel k takes 3 parameters"), tooFew.getMessage());
        assertTrue(tooFew.getMessage().contains("[ptr 0x1]"), tooFew.getMessage());

        assertThrows(IllegalArgumentException.class,
                () -> Kernel.checkArguments("k", sizes, KernelArgs.create().pointer(DevicePointer.of(1)).i64(2).i64(3)));
    }
}
