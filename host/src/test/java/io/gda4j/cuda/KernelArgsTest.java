package io.gda4j.cuda;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

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
    void structsTravelByValueWithTheirOwnLength() {
        ByteBuffer block = ByteBuffer.allocate(40).order(ByteOrder.LITTLE_ENDIAN);
        block.putInt(0, 0x314c4f4d);
        block.position(8);  // only position..limit travels
        KernelArgs args = KernelArgs.create().pointer(DevicePointer.of(0x20)).struct(block).i32(3);
        block.putInt(8, 99);  // copied when added: a later change does not reach the launch
        assertEquals(3, args.count());
        assertEquals(32, args.sizeBytes(1));
        assertEquals(8, block.position(), "the caller's buffer is not moved");
        assertEquals("[ptr 0x20, struct[32], i32 3]", args.toString());
        assertNotNull(args.toPointer());
        assertDoesNotThrow(() -> Kernel.checkArguments("k", new int[] {8, 32, 4}, args));
        IllegalArgumentException wrongLength = assertThrows(IllegalArgumentException.class,
                () -> Kernel.checkArguments("k", new int[] {8, 240, 4}, args));
        assertTrue(wrongLength.getMessage().contains("[8, 240, 4]"), wrongLength.getMessage());
        assertThrows(NullPointerException.class, () -> KernelArgs.create().struct(null));
    }

    @Test
    void growsPastInitialCapacity() {
        KernelArgs args = KernelArgs.create();
        for (int i = 0; i < 40; i++) {
            args.i32(i);
        }
        args.struct(ByteBuffer.allocate(16));
        assertEquals(41, args.count());
        assertEquals(16, args.sizeBytes(40));
        assertTrue(args.toString().endsWith("i32 39, struct[16]]"));
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
