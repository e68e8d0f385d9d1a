package io.gda4j.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Pointer;

import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

/**
 * Host memory one process lends another ({@link MemfdMemory}), mapped twice in this process as a peer process would
 * map it: both mappings are one memory, a handle of another kind or of a closed region is refused with a reason.
 */
class MemfdMemoryTest {
    final MemfdMemory memory = new MemfdMemory();

    @Test
    void aPeersMappingIsTheSameMemoryAtAnotherAddress() {
        try (CrossProcessMemory.Exported lent = memory.export(100, "rank 0 credit blocks");
             CrossProcessMemory.Opened peer = memory.open(lent.handle(), 100, "rank 0's credit blocks")) {
            assertEquals(MemfdMemory.PAGE_BYTES, lent.buffer().capacity(), "whole pages");
            assertEquals(0, lent.buffer().order(ByteOrder.LITTLE_ENDIAN).getLong(64), "zeroed");
            assertNotEquals(lent.address(), peer.address());
            new Pointer(peer.address()).setLong(64, 0x1122_3344_5566_7788L);
            assertEquals(0x1122_3344_5566_7788L, lent.buffer().order(ByteOrder.nativeOrder()).getLong(64));
            lent.buffer().put(8, (byte) 0x5a);
            assertEquals(0x5a, new Pointer(peer.address()).getByte(8));
            assertTrue(new String(lent.handle(), StandardCharsets.UTF_8).startsWith("/proc/"
                    + ProcessHandle.current().pid() + "/fd/"));
        }
    }

    @Test
    void aHandleThatIsNotAMemoryFileIsRefused() {
        ProxyException e = assertThrows(ProxyException.class, () -> memory.open("0123".getBytes(StandardCharsets.UTF_8),
                64, "rank 1's credit blocks"));
        assertTrue(e.getMessage().contains("rank 1's credit blocks") && e.getMessage().contains("same gda4j version"),
                e.getMessage());
    }

    @Test
    void aClosedRegionCannotBeMappedAnyMoreEvenWhereItsDescriptorNumberIsReused() {
        CrossProcessMemory.Exported lent = memory.export(64, "rank 1 credit blocks");
        byte[] handle = lent.handle();
        lent.close();
        // The lowest free descriptor number is the one just closed: another memory file most likely takes it.
        try (CrossProcessMemory.Exported other = memory.export(64, "rank 1 credit blocks")) {
            ProxyException e = assertThrows(ProxyException.class, () -> memory.open(handle, 64,
                    "rank 1's credit blocks"));
            assertTrue(e.getMessage().contains("cannot map rank 1's credit blocks"), e.getMessage());
            assertNotEquals(new String(handle, StandardCharsets.UTF_8), new String(other.handle(),
                    StandardCharsets.UTF_8), "a fresh token even on the same descriptor number");
        }
    }

    @Test
    void aPeerAskingForMoreThanWasLentIsRefused() {
        try (CrossProcessMemory.Exported lent = memory.export(64, "rank 1 credit blocks")) {
            ProxyException e = assertThrows(ProxyException.class, () -> memory.open(lent.handle(),
                    3 * MemfdMemory.PAGE_BYTES, "rank 1's credit blocks"));
            assertTrue(e.getMessage().contains("not the " + 3 * MemfdMemory.PAGE_BYTES), e.getMessage());
        }
    }
}
