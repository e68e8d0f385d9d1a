package io.gda4j.hostflag;

import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.CudaContext;
import io.gda4j.cuda.CudaStream;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.cuda.DevicePointer;
import io.gda4j.cuda.KernelArgs;
import io.gda4j.cuda.MappedHostMemory;
import io.gda4j.cuda.PtxModule;
import io.gda4j.gdrcopy.Gdrcopy;
import io.gda4j.gdrcopy.GpuPages;
import io.gda4j.gdrcopy.HostWritableGpuWord;
import io.gda4j.hostflag.HostFlags.Backend;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Every host-flag backend this machine offers, against the hostflag kernels: ordering (every value seen, in order),
 * round trips, the kernel's timeout, close. Needs a CUDA GPU; the gdrcopy cases also need libgdrapi and gdrdrv.
 * Each case skips with the reason where its backend cannot run.
 */
@Tag("gpu")
class HostFlagGpuTest {

    /** How long a kernel waits for the flag to move before it gives up: generous, a failure is a real failure. */
    private static final long KERNEL_TIMEOUT_NANOS = 10_000_000_000L;
    /** How long the host waits for an echo before it declares the test failed. */
    private static final long HOST_WAIT_NANOS = 30_000_000_000L;
    /** A hang turns into a test failure after this long (the kernels time out well before). */
    private static final Duration HANG_LIMIT = Duration.ofSeconds(60);

    /** The observe kernel's reply block: FlagEcho's layout plus the count. */
    private static final int COUNT_OFFSET = 24;

    private CudaContext context;

    @BeforeEach
    void openContext() {
        assumeTrue(Cuda.status().available() && Cuda.deviceCount() > 0,
                () -> "no CUDA device: " + Cuda.status().reason());
        context = Cuda.device(0).primaryContext();
    }

    @AfterEach
    void closeContext() {
        if (context != null) {
            context.close();
        }
    }

    private HostWritableGpuWord allocate(Backend backend) {
        if (backend == Backend.GDRCOPY) {
            assumeTrue(Gdrcopy.status().isAvailable(), () -> "gdrcopy cannot be used here: "
                    + Gdrcopy.status().sentence());
        }
        HostWritableGpuWord word = HostFlags.allocate(context, backend);
        assertEquals(backend.label(), word.backendName());
        return word;
    }

    /** The arguments of gda4j_flag_observe, in its parameter order; {@code echoAddress} 0 = no echo. */
    static KernelArgs observeArguments(long flagAddress, long initial, long last, DevicePointer values, int capacity,
            long echoAddress, long timeoutNanos, DevicePointer reply) {
        return KernelArgs.create().address(flagAddress).u64(initial).u64(last).pointer(values).u32(capacity)
                .address(echoAddress).u64(timeoutNanos).pointer(reply.plusBytes(COUNT_OFFSET))
                .pointer(reply.plusBytes(FlagEcho.SEEN_OFFSET)).pointer(reply.plusBytes(FlagEcho.STATUS_OFFSET));
    }

    @ParameterizedTest
    @EnumSource(value = Backend.class, names = {"GDRCOPY", "STREAM_WRITE", "MAPPED_PINNED"})
    void aNewWordIsZeroAndReadsBackWhatTheHostWrote(Backend backend) {
        try (HostWritableGpuWord word = allocate(backend)) {
            assertEquals(0, word.deviceAddress() & (Long.BYTES - 1), "8-byte aligned");
            if (backend == Backend.GDRCOPY) {
                assertTrue(GpuPages.isAligned(word.deviceAddress()), "gdrcopy words sit on a 64 KiB GPU page");
            }
            assertEquals(0, word.getLongAcquire());
            word.putLongRelease(0x1234_5678_9abcL);
            assertEquals(0x1234_5678_9abcL, word.getLongAcquire());
            word.putLongRelease(-7);
            assertEquals(-7, word.getLongAcquire());
        }
    }

    @ParameterizedTest
    @EnumSource(value = Backend.class, names = {"GDRCOPY", "STREAM_WRITE", "MAPPED_PINNED"})
    void theKernelSeesEveryValueInOrderWhenTheHostWaitsForEachEcho(Backend backend) {
        int n = 2_000;
        try (HostWritableGpuWord word = allocate(backend);
             MappedHostMemory reply = context.allocateMappedHost(FlagEcho.REPLY_BYTES);
             DeviceMemory values = context.allocate((long) n * Long.BYTES);
             CudaStream stream = context.createStream();
             PtxModule module = context.loadModule(FlagEcho.MODULE)) {
            reply.putLongRelease(FlagEcho.STATUS_OFFSET, FlagEcho.STATUS_RUNNING);
            DevicePointer base = reply.devicePointer();
            module.function(FlagEcho.OBSERVE_KERNEL).launch(1, 1, 0, stream, observeArguments(word.deviceAddress(),
                    0, n, values.pointer(), n, base.plusBytes(FlagEcho.ECHO_OFFSET).address(), KERNEL_TIMEOUT_NANOS,
                    base));
            for (long i = 1; i <= n; i++) {
                word.putLongRelease(i);
                awaitEcho(reply, i);
            }
            assertTimeoutPreemptively(HANG_LIMIT, () -> stream.synchronize());
            assertEquals(FlagEcho.STATUS_OK, reply.getLongAcquire(FlagEcho.STATUS_OFFSET), () -> status(reply, n));
            assertEquals(n, reply.getLong(COUNT_OFFSET), "one record per value");
            long[] seen = read(values, n);
            for (int i = 0; i < n; i++) {
                assertEquals(i + 1, seen[i], "record " + i);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = Backend.class, names = {"GDRCOPY", "STREAM_WRITE", "MAPPED_PINNED"})
    void theKernelSeesARisingSequenceEndingAtTheLastWhenTheHostWritesFlatOut(Backend backend) {
        int n = 100_000;
        try (HostWritableGpuWord word = allocate(backend);
             MappedHostMemory reply = context.allocateMappedHost(FlagEcho.REPLY_BYTES);
             DeviceMemory values = context.allocate((long) n * Long.BYTES);
             CudaStream stream = context.createStream();
             PtxModule module = context.loadModule(FlagEcho.MODULE)) {
            reply.putLongRelease(FlagEcho.STATUS_OFFSET, FlagEcho.STATUS_RUNNING);
            module.function(FlagEcho.OBSERVE_KERNEL).launch(1, 1, 0, stream, observeArguments(word.deviceAddress(),
                    0, n, values.pointer(), n, 0, KERNEL_TIMEOUT_NANOS, reply.devicePointer()));
            for (long i = 1; i <= n; i++) {
                word.putLongRelease(i);
            }
            assertTimeoutPreemptively(HANG_LIMIT, () -> stream.synchronize());
            assertEquals(FlagEcho.STATUS_OK, reply.getLongAcquire(FlagEcho.STATUS_OFFSET), () -> status(reply, n));
            long count = reply.getLong(COUNT_OFFSET);
            assertTrue(count >= 1 && count <= n, "records: " + count);
            long[] seen = read(values, (int) count);
            long previous = 0;
            for (int i = 0; i < count; i++) {
                assertTrue(seen[i] > previous && seen[i] <= n, "record " + i + " is " + seen[i] + " after "
                        + previous + ": the kernel saw the flag go backwards or beyond the last value");
                previous = seen[i];
            }
            assertEquals(n, seen[(int) count - 1], "the last value the kernel saw");
            System.out.printf("%s: the kernel saw %d of %d values written flat out%n", backend, count, n);
        }
    }

    @ParameterizedTest
    @EnumSource(value = Backend.class, names = {"GDRCOPY", "STREAM_WRITE", "MAPPED_PINNED"})
    void roundTripsEchoEveryRound(Backend backend) {
        int rounds = 2_000;
        try (HostWritableGpuWord word = allocate(backend);
             FlagEcho echo = FlagEcho.start(context, word, rounds, KERNEL_TIMEOUT_NANOS)) {
            long total = 0;
            for (int i = 0; i < rounds; i++) {
                long nanos = echo.roundTripNanos();
                assertTrue(nanos > 0, "round " + (i + 1) + " took " + nanos + " ns");
                total += nanos;
            }
            assertEquals(0, echo.roundsLeft());
            assertTimeoutPreemptively(HANG_LIMIT, echo::finish);
            assertEquals(FlagEcho.STATUS_OK, echo.status());
            assertEquals(rounds, word.getLongAcquire(), "the flag holds the last round");
            assertThrows(IllegalStateException.class, echo::roundTripNanos, "no rounds left");
            System.out.printf("%s: %d round trips, mean %.2f us (a functional check, not a benchmark)%n", backend,
                    rounds, total / 1e3 / rounds);
        }
    }

    @ParameterizedTest
    @EnumSource(value = Backend.class, names = {"GDRCOPY", "STREAM_WRITE", "MAPPED_PINNED"})
    void aKernelWaitingOnAFlagNobodyWritesTimesOut(Backend backend) {
        long timeoutNanos = 50_000_000L;
        try (HostWritableGpuWord word = allocate(backend);
             MappedHostMemory reply = context.allocateMappedHost(FlagEcho.REPLY_BYTES);
             CudaStream stream = context.createStream();
             PtxModule module = context.loadModule(FlagEcho.MODULE)) {
            reply.putLongRelease(FlagEcho.STATUS_OFFSET, FlagEcho.STATUS_RUNNING);
            module.function(FlagEcho.ECHO_KERNEL).launch(1, 1, 0, stream,
                    FlagEcho.echoArguments(word.deviceAddress(), reply.devicePointer(), 1, 10, timeoutNanos));
            assertTimeoutPreemptively(HANG_LIMIT, () -> stream.synchronize(), "the kernel hung instead of timing out");
            assertEquals(FlagEcho.STATUS_TIMEOUT, reply.getLongAcquire(FlagEcho.STATUS_OFFSET),
                    () -> status(reply, 1));
            assertEquals(0, reply.getLong(FlagEcho.SEEN_OFFSET), "the flag was never written");
            assertEquals(0, reply.getLong(FlagEcho.ECHO_OFFSET), "no round was answered");
        }
    }

    @ParameterizedTest
    @EnumSource(value = Backend.class, names = {"GDRCOPY", "STREAM_WRITE", "MAPPED_PINNED"})
    void closingAnEchoEarlyStopsTheKernel(Backend backend) {
        try (HostWritableGpuWord word = allocate(backend)) {
            FlagEcho echo = FlagEcho.start(context, word, 1_000_000, KERNEL_TIMEOUT_NANOS);
            try {
                echo.roundTripNanos();
                echo.roundTripNanos();
                // Without the stop value the kernel would wait KERNEL_TIMEOUT_NANOS for round 3.
                assertTimeoutPreemptively(Duration.ofSeconds(5), echo::close);
                assertEquals(FlagEcho.FLAG_STOP, word.getLongAcquire());
            } finally {
                echo.close();
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = Backend.class, names = {"GDRCOPY", "STREAM_WRITE", "MAPPED_PINNED"})
    void closeIsIdempotentAndUseAfterCloseThrows(Backend backend) {
        HostWritableGpuWord word = allocate(backend);
        word.putLongRelease(1);
        word.close();
        word.close();
        assertThrows(IllegalStateException.class, () -> word.putLongRelease(2));
        assertThrows(IllegalStateException.class, word::getLongAcquire);
    }

    @Test
    void autoAllocatesWhatChooseSays() {
        try (HostWritableGpuWord word = HostFlags.allocate(context, Backend.AUTO)) {
            assertEquals(HostFlags.choose(Backend.AUTO).backend().label(), word.backendName());
        }
    }

    @Test
    void aStreamWriteWordOverAnExistingWordOwnsNothing() {
        try (DeviceMemory memory = context.allocate(64);
             CudaStream stream = context.createStream()) {
            memory.fill((byte) 0);
            StreamWriteWord word = StreamWriteWord.at(stream, memory.pointer().plusBytes(8));
            word.putLongRelease(7);
            word.flush();
            assertEquals(7, memory.readLong(8));
            assertEquals(0, memory.readLong(0), "neighbours untouched");
            assertEquals(7, word.getLongAcquire());
            word.close();
            assertFalse(stream.isClosed(), "the stream belongs to the caller");
            assertFalse(memory.isClosed(), "the memory belongs to the caller");
            assertThrows(IllegalArgumentException.class, () -> StreamWriteWord.at(stream,
                    memory.pointer().plusBytes(4)));
        }
    }

    private static void awaitEcho(MappedHostMemory reply, long value) {
        long start = System.nanoTime();
        while (reply.getLongAcquire(FlagEcho.ECHO_OFFSET) != value) {
            if (reply.getLongAcquire(FlagEcho.STATUS_OFFSET) != FlagEcho.STATUS_RUNNING) {
                fail("the kernel stopped before echoing " + value + ": " + status(reply, value));
            }
            if (System.nanoTime() - start > HOST_WAIT_NANOS) {
                fail("no echo of " + value + " within " + HOST_WAIT_NANOS / 1_000_000 + " ms");
            }
        }
    }

    private static String status(MappedHostMemory reply, long wanted) {
        return FlagEcho.describeStatus(reply.getLongAcquire(FlagEcho.STATUS_OFFSET),
                reply.getLong(FlagEcho.SEEN_OFFSET), wanted);
    }

    private static long[] read(DeviceMemory memory, int count) {
        byte[] raw = new byte[count * Long.BYTES];
        memory.copyToHost(0, raw, 0, raw.length);
        ByteBuffer b = ByteBuffer.wrap(raw).order(ByteOrder.nativeOrder());
        long[] out = new long[count];
        for (int i = 0; i < count; i++) {
            out[i] = b.getLong(i * Long.BYTES);
        }
        return out;
    }
}
