package io.gda4j.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import jcuda.Pointer;
import jcuda.driver.JCudaDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Needs a CUDA GPU; skipped with the probe's reason elsewhere. */
@Tag("gpu")
class CudaGpuTest {
    /** Hand-written PTX so kernel launches can be tested before gda4j-device-ptx ships any. */
    private static final String TEST_PTX = String.join("\n",
            ".version 8.0",
            ".target sm_80",
            ".address_size 64",
            "",
            ".visible .entry store_u64(",
            "\t.param .u64 store_u64_param_0,",
            "\t.param .u64 store_u64_param_1",
            ")",
            "{",
            "\t.reg .b64 %rd<4>;",
            "\tld.param.u64 %rd1, [store_u64_param_0];",
            "\tld.param.u64 %rd2, [store_u64_param_1];",
            "\tcvta.to.global.u64 %rd3, %rd1;",
            "\tst.global.u64 [%rd3], %rd2;",
            "\tret;",
            "}",
            "",
            ".visible .entry release_u64(",
            "\t.param .u64 release_u64_param_0,",
            "\t.param .u64 release_u64_param_1",
            ")",
            "{",
            "\t.reg .b64 %rd<4>;",
            "\tld.param.u64 %rd1, [release_u64_param_0];",
            "\tld.param.u64 %rd2, [release_u64_param_1];",
            "\tcvta.to.global.u64 %rd3, %rd1;",
            "\tst.release.sys.global.u64 [%rd3], %rd2;",
            "\tret;",
            "}",
            "");

    private CudaContext context;

    @BeforeEach
    void openContext() {
        Assumptions.assumeTrue(Cuda.status().available() && Cuda.deviceCount() > 0,
                "no CUDA device: " + Cuda.status().reason());
        context = Cuda.device(0).primaryContext();
    }

    @AfterEach
    void closeContext() {
        if (context != null) {
            context.close();
        }
    }

    @Test
    void deviceIdentity() {
        CudaDevice device = Cuda.device(0);
        assertSame(device, Cuda.device(0));
        assertFalse(device.name().isEmpty());
        assertTrue(device.uuid().matches("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"),
                device.uuid());
        assertFalse(device.pciBusId().isEmpty());
        assertTrue(device.totalMemoryBytes() > 0);
        assertTrue(device.computeCapabilityMajor() >= 7);
        assertTrue(device.multiprocessorCount() > 0);
        assertFalse(device.canAccessPeer(device));
        assertTrue(Cuda.status().driverVersion() > 0);
        assertThrows(IllegalArgumentException.class, () -> Cuda.device(Cuda.deviceCount()));
    }

    @Test
    void deviceMemoryRoundTrip() {
        int sizeBytes = 1 << 20;
        byte[] data = new byte[sizeBytes];
        new Random(42).nextBytes(data);
        try (DeviceMemory memory = context.allocate(sizeBytes)) {
            assertEquals(sizeBytes, memory.sizeBytes());
            assertTrue(memory.address() != 0);
            memory.copyFromHost(0, data, 0, sizeBytes);
            byte[] back = new byte[sizeBytes];
            memory.copyToHost(0, back, 0, sizeBytes);
            assertArrayEquals(data, back);

            byte[] part = new byte[100];
            memory.copyToHost(1000, part, 0, 100);
            assertArrayEquals(Arrays.copyOfRange(data, 1000, 1100), part);

            memory.writeLong(4096, 0x0123_4567_89ab_cdefL);
            assertEquals(0x0123_4567_89ab_cdefL, memory.readLong(4096));

            memory.fill(0, 64, (byte) 0x5a);
            byte[] filled = new byte[64];
            memory.copyToHost(0, filled, 0, 64);
            byte[] expected = new byte[64];
            Arrays.fill(expected, (byte) 0x5a);
            assertArrayEquals(expected, filled);

            ByteBuffer direct = ByteBuffer.allocateDirect(256);
            for (int i = 0; i < 256; i++) {
                direct.put(i, (byte) i);
            }
            memory.copyFromHost(8192, direct);
            assertEquals(256, direct.position());
            ByteBuffer read = ByteBuffer.allocateDirect(256);
            memory.copyToHost(8192, read);
            read.flip();
            direct.flip();
            assertEquals(direct, read);

            // Buffers are read and written from their position, not their base.
            direct.position(16);
            memory.copyFromHost(16384, direct);
            ByteBuffer heap = ByteBuffer.allocate(8);
            heap.position(2);
            memory.copyToHost(16384, heap);
            assertEquals(16, heap.get(2));
            assertEquals(21, heap.get(7));
            assertEquals(0, heap.get(0));

            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> memory.readLong(sizeBytes - 4));
            assertTrue(e.getMessage().contains(sizeBytes + " bytes"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> memory.copyFromHost(-1, data, 0, 1));
            assertThrows(IllegalArgumentException.class, () -> memory.copyFromHost(0, data, 10, sizeBytes));
        }
    }

    @Test
    void mappedHostMemoryIsSharedWithTheGpu() {
        try (MappedHostMemory mapped = context.allocateMappedHost(4096);
                CudaStream stream = context.createStream();
                DeviceMemory staging = context.allocate(64)) {
            assertEquals(4096, mapped.hostBuffer().capacity());
            assertEquals(0L, mapped.getLong(4088), "zeroed at allocation");

            mapped.putLongRelease(64, 0x1122_3344_5566_7788L);
            long[] seen = {0};
            Cuda.check(JCudaDriver.cuMemcpyDtoH(Pointer.to(seen), mapped.devicePointer().plusBytes(64), Long.BYTES),
                    "cuMemcpyDtoH(mapped word)");
            assertEquals(0x1122_3344_5566_7788L, seen[0]);

            stream.copyAsync(staging.pointer(), mapped.devicePointer().plusBytes(64), Long.BYTES);
            stream.synchronize();
            assertEquals(0x1122_3344_5566_7788L, staging.readLong(0));

            stream.writeValue64(mapped.devicePointer().plusBytes(128), 42L);
            stream.synchronize();
            assertTrue(stream.isComplete());
            assertEquals(42L, mapped.getLongAcquire(128));

            assertThrows(IllegalArgumentException.class, () -> mapped.getLongAcquire(4));
            assertThrows(IllegalArgumentException.class, () -> mapped.putLongRelease(4096, 1));
        }
    }

    /**
     * Stream b waits for an event recorded on stream a behind a gate (a stream wait on a mapped host word): b's store
     * stays undone while the gate is shut, and lands once the host opens it.
     */
    @Test
    void aStreamWaitsForAnEventOfAnotherStream() throws InterruptedException {
        try (MappedHostMemory words = context.allocateMappedHost(4096);
                CudaStream a = context.createStream("gated");
                CudaStream b = context.createStream("waiting");
                CudaEvent aQueued = context.createOrderingEvent()) {
            a.waitValue64AtLeast(words.devicePointer(), 1);
            try {
                aQueued.record(a);
                b.waitEvent(aQueued);
                b.writeValue64(words.devicePointer().plusBytes(64), 7);
                Thread.sleep(50);
                assertFalse(b.isComplete(), "b ran past the event of the gated stream");
                assertEquals(0L, words.getLongAcquire(64));
            } finally {
                words.putLongRelease(0, 1); // a shut gate would hold stream a forever
            }
            b.synchronize();
            assertEquals(7L, words.getLongAcquire(64));
            a.synchronize();
        }
    }

    @Test
    void eventsMeasureElapsedTime() {
        try (CudaStream stream = context.createStream();
                CudaEvent start = context.createEvent();
                CudaEvent stop = context.createEvent();
                DeviceMemory a = context.allocate(1 << 20);
                DeviceMemory b = context.allocate(1 << 20)) {
            start.record(stream);
            stream.copyAsync(b.pointer(), a.pointer(), 1 << 20);
            stop.record(stream);
            stop.synchronize();
            assertTrue(stop.isComplete());
            assertTrue(stop.elapsedMillisSince(start) >= 0f);
        }
    }

    @Test
    void twoContextsOnOneDeviceCloseIndependentlyAndIdempotently() {
        CudaContext first = Cuda.device(0).primaryContext();
        CudaContext second = Cuda.device(0).primaryContext();
        DeviceMemory owned = second.allocate(4096);
        first.close();
        first.close();
        assertThrows(IllegalStateException.class, () -> first.allocate(16));
        owned.fill((byte) 1);
        assertEquals(0x0101_0101_0101_0101L, owned.readLong(0));
        second.close();
        assertTrue(owned.isClosed(), "closing a context closes what it created");
        assertDoesNotThrow(owned::close);
        second.close();
    }

    @Test
    void missingModuleSaysWhatToAdd() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> context.loadModule("no_such_module_x"));
        assertTrue(e.getMessage().contains("io/gda4j/ptx/no_such_module_x.ptx"), e.getMessage());
    }

    @Test
    void kernelsLaunchAndCheckTheirArguments() {
        context.makeCurrent();
        try (PtxModule module = PtxModule.load(context, "inline_test",
                        TEST_PTX.getBytes(StandardCharsets.US_ASCII));
                CudaStream stream = context.createStream();
                DeviceMemory target = context.allocate(64);
                MappedHostMemory flag = context.allocateMappedHost(64)) {
            assertEquals(List.of("store_u64", "release_u64"), module.kernelNames());
            Kernel store = module.function("store_u64");
            assertSame(store, module.function("store_u64"));
            assertTrue(store.maxThreadsPerBlock() > 0);
            assertTrue(store.maxActiveBlocksPerMultiprocessor(128, 0) > 0);

            store.launch(1, 1, 0, stream, KernelArgs.create().pointer(target.pointer()).u64(0xfeed_beefL));
            stream.synchronize();
            assertEquals(0xfeed_beefL, target.readLong(0));

            module.function("release_u64").launch(1, 1, 1, 1, 1, 1, 0, stream,
                    KernelArgs.create().address(flag.deviceAddress() + 8).i64(7));
            stream.synchronize();
            assertEquals(7L, flag.getLongAcquire(8));

            CudaException missing = assertThrows(CudaException.class, () -> module.function("nope"));
            assertTrue(missing.getMessage().contains("store_u64"), missing.getMessage());
            assertThrows(IllegalArgumentException.class,
                    () -> store.launch(1, 1, 0, stream, KernelArgs.create().pointer(target.pointer())));
            assertThrows(IllegalArgumentException.class,
                    () -> store.launch(0, 1, 0, stream, KernelArgs.create().pointer(target.pointer()).u64(1)));
        }
    }

    @Test
    void peerCopyBetweenTwoGpus() {
        Assumptions.assumeTrue(Cuda.deviceCount() >= 2, "needs two GPUs, found " + Cuda.deviceCount());
        CudaDevice other = Cuda.device(1);
        try (CudaContext peer = other.primaryContext();
                DeviceMemory src = context.allocate(4096);
                DeviceMemory dst = peer.allocate(4096);
                CudaStream stream = context.createStream()) {
            if (Cuda.device(0).canAccessPeer(other)) {
                context.enablePeerAccess(peer);
                context.enablePeerAccess(peer); // already enabled is fine
                assertTrue(Cuda.device(0).p2pPerformanceRank(other) >= 0);
            }
            src.writeLong(0, 99L);
            stream.copyPeerAsync(dst.pointer(), peer, src.pointer(), context, 4096);
            stream.synchronize();
            assertEquals(99L, dst.readLong(0));
        }
    }
}
