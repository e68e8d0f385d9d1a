package io.gda4j.world;

import io.gda4j.cuda.KernelArgs;
import io.gda4j.cuda.RequiresCuda;
import io.gda4j.transport.Transport;
import io.gda4j.world.ErrorRecordDescriptor.Code;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The P2P device API on real GPUs: the transport conformance suite, then signals summed, inline messages, timeouts
 * and range errors.
 */
@RequiresCuda
@Tag("gpu")
class P2pGpuTest extends TransportConformanceGpuTest {
    static final long HEAP = 8L << 20;

    P2pGpuTest() {
        super(new Trial(Transport.P2P, 3L << 20, 3, 42,
                1, 7, 8, 15, 16, 17, 31, 63, 64, 100, 255, 4096, 4097, 65_536 + 3, 1 << 20)
                .threadPutsUpTo(65_536 + 3)); // one thread moving a MiB is correct but slow; warp and block cover it
    }

    @Override
    protected LocalWorld createWorld() {
        return GpuWorlds.twoRanks(HEAP, Duration.ofSeconds(10));
    }

    @Test
    void manyThreadsSignallingOneCounterSumExactly() {
        long sig = signals.word(1);
        world.rank(1).writeHeapLong(sig, 0);
        int blocks = 64;
        int threads = 256;
        int perThread = 16;
        ops.signalAddFromGrid(0, 1, sig, 3, blocks, threads, perThread);
        assertEquals(3L * blocks * threads * perThread, world.rank(1).readHeapLong(sig));
    }

    @Test
    void signalSetThenWaitSeesTheValue() {
        long sig = signals.word(2);
        ops.signal(1, 0, sig, SignalOp.SET, 123_456_789_012L);
        assertEquals(123_456_789_012L, ops.waitUntil(0, sig, Cmp.GE, 123_456_789_012L));
        ops.signal(1, 0, sig, SignalOp.ADD, 1);
        assertEquals(123_456_789_013L, world.rank(0).readHeapLong(sig));
    }

    @Test
    void fenceThenSignalIsARelease() {
        long sig = signals.word(3);
        world.rank(1).writeHeapLong(sig, 0);
        ops.fenceThenSignal(0, 1, sig, SignalOp.ADD, 5);
        assertEquals(5, ops.waitUntil(1, sig, Cmp.EQ, 5));
    }

    @Test
    void inlineMessagesCarryTheirPayloadAndSequence() {
        long slot = signals.word(4); // 128-byte aligned buffer: word 4 is 16-byte aligned
        world.rank(1).writeHeapLong(slot, 0);
        world.rank(1).writeHeapLong(slot + 8, 0);
        long[] values = {0L, -1L, 0x0123_4567_89AB_CDEFL, Long.MIN_VALUE};
        for (int i = 0; i < values.length; i++) {
            ops.putInline(0, 1, slot, values[i], i + 1);
            assertEquals(values[i], ops.waitInline(1, slot, i + 1), "message " + (i + 1));
        }
        assertThrows(IllegalArgumentException.class, () -> ops.putInline(0, 1, slot + 8, 1, 9));
    }

    @Test
    void waitInlineTimesOutWhenNoMessageCarriesTheSequence() {
        try (LocalWorld w = GpuWorlds.twoRanks(1 << 20, Duration.ofMillis(100))) {
            long slot = w.heap().allocateSignals(2).word(0);
            DeviceWaitTimeoutException e = assertThrows(DeviceWaitTimeoutException.class,
                    () -> new DeviceOps(w).waitInline(0, slot, 3));
            assertTrue(e.getMessage().contains("timed out"), e.getMessage());
        }
    }

    @Test
    void waitTimeoutThrowsTheDocumentedException() {
        try (LocalWorld w = GpuWorlds.twoRanks(1 << 20, Duration.ofMillis(200))) {
            HeapBuffer s = w.heap().allocateSignals(1);
            DeviceOps o = new DeviceOps(w);
            long t0 = System.nanoTime();
            DeviceWaitTimeoutException e = assertThrows(DeviceWaitTimeoutException.class,
                    () -> o.waitUntil(1, s.word(0), Cmp.GE, 5));
            long tookMs = (System.nanoTime() - t0) / 1_000_000;
            String m = e.getMessage();
            assertTrue(m.contains("rank 1, wait_until"), m);
            assertTrue(m.contains("timed out after"), m);
            assertTrue(m.contains(String.format("0x%x", s.word(0))), m);
            assertTrue(m.contains("was 0, waiting for >= 5"), m);
            assertEquals(Code.WAIT_TIMEOUT.value(), e.record().code());
            assertTrue(e.record().elapsedNanos() >= 200_000_000L, "gave up early: " + e.record().elapsedNanos());
            assertTrue(tookMs < 10_000, "the timeout took " + tookMs + " ms");
            // The failing rank raised the abort flag of its peer too, over P2P.
            assertTrue(w.rank(0).abortRaised(), "peer's abort flag not raised");
            w.clearErrors();
            w.checkErrors();
        }
    }

    @Test
    void outOfRangeOffsetsAreRejectedBeforeAnyKernelRuns() {
        long end = world.heap().sizeBytes();
        assertThrows(IllegalArgumentException.class, () -> ops.put(0, 1, end - 8, src.offset(), 16, Scope.BLOCK));
        assertThrows(IllegalArgumentException.class, () -> ops.put(0, 1, dst.offset(), -1, 16, Scope.BLOCK));
        assertThrows(IllegalArgumentException.class, () -> ops.put(0, world.size(), dst.offset(), src.offset(), 16, Scope.BLOCK));
        assertThrows(IllegalArgumentException.class, () -> ops.signal(0, 1, signals.word(0) + 4, SignalOp.SET, 1));
        assertThrows(IllegalArgumentException.class, () -> ops.waitUntil(0, end, Cmp.EQ, 1));
        // Nothing ran, so nothing was recorded.
        world.checkErrors();
    }

    @Test
    void theDeviceRejectsOutOfRangeOffsetsItself() {
        Rank r0 = world.rank(0);
        long end = world.heap().sizeBytes();
        r0.scratch().writeLong(0, 0);
        // Straight to the kernel, past DeviceOps' host checks: the device API must refuse on its own.
        r0.kernel(DeviceOps.MODULE, "gda4j_op_put").launch(1, 32, 0, r0.stream(), KernelArgs.create()
                .pointer(r0.deviceView()).i32(1).i64(end - 8).i64(src.offset()).i64(64).u32(Scope.WARP.code())
                .i32(0).i64(0).u32(0).i64(0).pointer(r0.scratch().pointer()));
        r0.stream().synchronize();
        DeviceErrorException e = assertThrows(DeviceErrorException.class, world::checkErrors);
        assertEquals(Code.OUT_OF_RANGE.value(), e.record().code());
        assertTrue(e.getMessage().contains("outside the symmetric heap"), e.getMessage());
        assertEquals(-3, (int) r0.scratch().readLong(0));
        world.clearErrors();
    }
}
