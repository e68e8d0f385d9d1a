package io.gda4j.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jcuda.driver.CUipcMemHandle;

import org.junit.jupiter.api.Test;

/**
 * The part of CUDA IPC that needs no GPU: reaching the 64 handle bytes inside JCuda's handle object, which JCuda
 * keeps in a private field with no accessor. Run on every JDK of CI, so a JDK that closed that door would fail here
 * rather than on the first multi-process world.
 */
class IpcMemoryTest {
    @Test
    void theHandleBytesAreTheArrayJCudasNativeCodeReadsAndWrites() {
        CUipcMemHandle h = new CUipcMemHandle();
        byte[] bytes = IpcMemory.handleBytes(h);
        assertEquals(IpcMemory.HANDLE_BYTES, bytes.length);
        bytes[0] = 42;
        bytes[63] = -1;
        byte[] again = IpcMemory.handleBytes(h);
        assertSame(bytes, again, "the field itself, so bytes written before cuIpcOpenMemHandle are what it reads");
        assertEquals(42, again[0]);
        assertEquals(-1, again[63]);
    }

    @Test
    void aHandleOfTheWrongLengthIsRefusedBeforeAnyDriverCall() {
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> IpcMemory.open(null, new byte[63], 4096, "test"));
        assertTrue(e.getMessage().contains("64 bytes"), e.getMessage());
    }
}
