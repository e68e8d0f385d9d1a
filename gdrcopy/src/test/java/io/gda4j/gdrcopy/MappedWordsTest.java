package io.gda4j.gdrcopy;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The hot-path accessors of {@link GdrMapping}, over host memory standing in for a mapping. */
class MappedWordsTest {

    private static ByteBuffer direct(int size) {
        return ByteBuffer.allocateDirect(size).order(ByteOrder.nativeOrder());
    }

    @Test
    void storesLandInNativeOrderWhereTheGpuReadsThem() {
        ByteBuffer memory = direct(64);
        MappedWords words = new MappedWords(memory);
        words.putLongRelease(8, 0x0102030405060708L);
        words.putLongVolatile(16, -1L);
        assertEquals(0x0102030405060708L, memory.getLong(8));
        assertEquals(ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN ? 0x08 : 0x01, memory.get(8));
        assertEquals(-1L, memory.getLong(16));
        assertEquals(0x0102030405060708L, words.getLongAcquire(8));
        assertEquals(-1L, words.getLongVolatile(16));
    }

    @Test
    void refusesWordsOutsideTheMapping() {
        MappedWords words = new MappedWords(direct(16));
        words.putLongRelease(8, 1);
        assertThrows(IndexOutOfBoundsException.class, () -> words.putLongRelease(16, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> words.getLongAcquire(-8));
        assertThrows(IndexOutOfBoundsException.class, () -> words.getLongAcquire(Long.MAX_VALUE - 7));
        assertThrows(IndexOutOfBoundsException.class, () -> new MappedWords(direct(4)).getLongAcquire(0));
    }

    @Test
    void refusesWordsThatAreNotNaturallyAligned() {
        MappedWords words = new MappedWords(direct(64));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> words.putLongRelease(4, 1));
        assertTrue(e.getMessage().contains("not 8-byte aligned"), e.getMessage());
        // a mapping whose first byte is 4 past an 8-byte boundary: offset 4 is the aligned one
        ByteBuffer shifted = direct(64).position(4).slice().order(ByteOrder.nativeOrder());
        MappedWords shiftedWords = new MappedWords(shifted);
        shiftedWords.putLongRelease(4, 42);
        assertEquals(42, shiftedWords.getLongAcquire(4));
        assertThrows(IllegalArgumentException.class, () -> shiftedWords.putLongRelease(0, 1));
    }

    @Test
    void refusesHeapBuffers() {
        assertThrows(IllegalArgumentException.class, () -> new MappedWords(ByteBuffer.allocate(64)));
    }

    @Test
    void payloadWrittenBeforeAReleaseIsSeenAfterTheAcquire() throws InterruptedException {
        // Producer: plain payload stores, then putLongRelease of a sequence number; consumer: getLongAcquire.
        ByteBuffer memory = direct(4096);
        MappedWords words = new MappedWords(memory);
        int rounds = 20_000;
        int payloadWords = 32;
        long[] errors = new long[1];
        Thread consumer = new Thread(() -> {
            ByteBuffer view = memory.duplicate().order(ByteOrder.nativeOrder());
            for (long seq = 1; seq <= rounds; seq++) {
                while (words.getLongAcquire(0) < seq) {
                    Thread.onSpinWait();
                }
                for (int i = 1; i <= payloadWords; i++) {
                    if (view.getLong(i * Long.BYTES) < seq) {
                        errors[0]++;
                    }
                }
                words.putLongRelease(8 * (payloadWords + 1), seq); // acknowledge
            }
        });
        consumer.start();
        ByteBuffer view = memory.duplicate().order(ByteOrder.nativeOrder());
        for (long seq = 1; seq <= rounds; seq++) {
            for (int i = 1; i <= payloadWords; i++) {
                view.putLong(i * Long.BYTES, seq);
            }
            words.putLongRelease(0, seq);
            while (words.getLongAcquire(8 * (payloadWords + 1)) < seq) {
                Thread.onSpinWait();
            }
        }
        consumer.join(TimeUnit.SECONDS.toMillis(60));
        assertEquals(0, errors[0], "the consumer saw a flag before the payload it publishes");
    }
}
