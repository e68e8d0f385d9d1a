package io.gda4j.proxy;

import io.gda4j.transport.Transport;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.cuda.KernelArgs;
import io.gda4j.world.Cmp;
import io.gda4j.world.DeviceErrorException;
import io.gda4j.world.DeviceOps;
import io.gda4j.world.DeviceWaitTimeoutException;
import io.gda4j.world.ErrorRecordDescriptor.Code;
import io.gda4j.world.HeapBuffer;
import io.gda4j.world.LocalWorld;
import io.gda4j.world.Rank;
import io.gda4j.world.Scope;
import io.gda4j.world.SignalOp;
import io.gda4j.world.TransportConformanceGpuTest;
import io.gda4j.world.WorldConfig;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The device API over the proxy transport on real GPUs (two ranks on GPUs 0 and 1, or both on GPU 0): every byte of
 * every put checked against poisoned destinations, thousands of triggers from many warps, a signal never overtaking
 * its data, flush semantics with another channel flowing meanwhile, and the failure paths (stopped proxy, dead proxy
 * thread, out-of-range calls that never reach the ring).
 */
@RequiresCuda
@Tag("gpu")
class ProxyGpuTest extends TransportConformanceGpuTest {
    static final long HEAP = 64L << 20;

    ProxyGpuTest() {
        // The tests launch the bench kernels while another rank's kernel may spin: loaded up front.
        super(new Trial(Transport.PROXY, 16L << 20, 3, 42,
                1, 7, 8, 15, 16, 17, 63, 64, 255, 4096, 4097, 65_536 + 3, 1 << 20, 3 << 20)
                .destinationsFrom(64).loading("bench"));
    }

    static void assumeGpu() {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
    }

    /** As host's GpuWorlds: the configured GPU list (GDA4J_GPUS, e.g. 0,0,0,0) when it has two or more, else 0,1 or 0,0. */
    static List<Integer> gpus() {
        List<Integer> configured = WorldConfig.resolve().gpus();
        if (configured.size() >= 2) {
            return configured;
        }
        return Cuda.deviceCount() >= 2 ? List.of(0, 1) : List.of(0, 0);
    }

    /** A two-rank proxy world; {@code proxyProps} are set as system properties while it connects. */
    static LocalWorld proxyWorld(long heapBytes, Duration timeout, Map<String, String> proxyProps) {
        assumeGpu();
        for (Map.Entry<String, String> e : proxyProps.entrySet()) {
            System.setProperty(e.getKey(), e.getValue());
        }
        try {
            return LocalWorld.create(WorldConfig.builder().gpus(gpus()).heapSizeBytes(heapBytes).waitTimeout(timeout)
                    .transport(Transport.PROXY.label()).build());
        } finally {
            for (String k : proxyProps.keySet()) {
                System.clearProperty(k);
            }
        }
    }

    static ProxyChannel channel(LocalWorld w, int from, int to) {
        return (ProxyChannel) w.rank(from).link(to).resources();
    }

    @Override
    protected LocalWorld createWorld() {
        return proxyWorld(HEAP, Duration.ofSeconds(10), Map.of());
    }

    @Test
    void aWorldSharesOneProxyServiceWhoseThreadsRun() {
        ProxyService service = channel(world, 0, 1).service();
        assertTrue(service == channel(world, 1, 0).service(), "a world shares one proxy service");
        for (ProxyThread r : service.threads()) {
            assertTrue(r.isAlive(), r.name());
        }
        assertEquals(List.of(), world.rank(0).linkProblems());
    }

    @Test
    void thousandsOfTriggersFromManyWarpsAllLand() {
        checkManyWarps(world, ops, src, dst, signals.word(1), 64, 4, 16);
    }

    @Test
    void aTinyFifoPushesBackOnManyWarpsAndLosesNothing() {
        try (LocalWorld w = proxyWorld(HEAP, Duration.ofSeconds(20), Map.of(ProxyConfig.FIFO_DEPTH_PROP_NAME, "4"))) {
            HeapBuffer s = w.heap().allocate(16L << 20);
            HeapBuffer d = w.heap().allocate(16L << 20);
            checkManyWarps(w, new DeviceOps(w), s, d, w.heap().allocateSignals(1).word(0), 32, 4, 8);
        }
    }

    /** blocks x warpsPerBlock warps, perWarp puts each of random sizes into disjoint poisoned slots, then counters. */
    static void checkManyWarps(LocalWorld w, DeviceOps o, HeapBuffer s, HeapBuffer d, long counter, int blocks,
                               int warpsPerBlock, int perWarp) {
        int warps = blocks * warpsPerBlock;
        int puts = warps * perWarp;
        long slot = d.sizeBytes() / puts & ~255L;
        assertTrue(slot >= 512, "destination too small for " + puts + " puts");
        Random rnd = new Random(5);
        byte[] source = new byte[(int) Math.min(s.sizeBytes(), 8L << 20)];
        rnd.nextBytes(source);
        w.rank(0).writeHeap(s.offset(), source);
        w.rank(1).fillHeap(d.offset(), d.sizeBytes(), POISON);
        w.rank(1).writeHeapLong(counter, 0);
        long[] table = new long[3 * puts];
        for (int i = 0; i < puts; i++) {
            long bytes = 1 + rnd.nextInt((int) slot - 64);
            table[3 * i] = d.offset() + i * slot + rnd.nextInt(32);
            table[3 * i + 1] = s.offset() + rnd.nextInt(source.length - (int) bytes);
            table[3 * i + 2] = bytes;
        }
        o.putMany(0, 1, table, perWarp, warpsPerBlock, counter);
        assertEquals(warps, w.rank(1).readHeapLong(counter), "one signal per warp, after its puts");
        byte[] got = new byte[(int) d.sizeBytes()];
        w.rank(1).readHeap(d.offset(), got);
        for (int i = 0; i < puts; i++) {
            int base = (int) (i * slot);
            int at = (int) (table[3 * i] - d.offset());
            int from = (int) (table[3 * i + 1] - s.offset());
            int n = (int) table[3 * i + 2];
            for (int k = base; k < base + slot; k++) {
                byte want = k >= at && k < at + n ? source[from + k - at] : POISON;
                if (got[k] != want) {
                    throw new AssertionError("put " + i + " (" + n + " bytes to slot offset " + (at - base) + "): byte "
                            + (k - base) + " of its slot is " + got[k] + ", expected " + want);
                }
            }
        }
        assertEquals(List.of(), w.rank(0).linkProblems());
    }

    @Test
    void signalsSetAddAndSumExactly() {
        long sig = signals.word(2);
        ops.signal(1, 0, sig, SignalOp.SET, 123_456_789_012L);
        assertEquals(123_456_789_012L, ops.waitUntil(0, sig, Cmp.GE, 123_456_789_012L));
        ops.signal(1, 0, sig, SignalOp.ADD, 1);
        assertEquals(123_456_789_013L, world.rank(0).readHeapLong(sig));
        ops.signal(1, 0, sig, SignalOp.SET, -1L);
        assertEquals(-1L, world.rank(0).readHeapLong(sig), "all 64 bits of the value travel");
        long sum = signals.word(3);
        world.rank(1).writeHeapLong(sum, 0);
        ops.signalAddFromGrid(0, 1, sum, 3, 4, 64, 4);
        assertEquals(3L * 4 * 64 * 4, world.rank(1).readHeapLong(sum));
        ops.fenceThenSignal(0, 1, sum, SignalOp.ADD, 5);
        assertEquals(3L * 4 * 64 * 4 + 5, world.rank(1).readHeapLong(sum));
    }

    @Test
    void aSignalNeverOvertakesThePutBeforeIt() {
        Rank r0 = world.rank(0);
        Rank r1 = world.rank(1);
        long sig = signals.word(4);
        int words = (1 << 20) / 8;
        r1.writeHeapLong(sig, 0);
        try (DeviceMemory sum = r1.context().allocate(16)) {
            for (int round = 1; round <= 40; round++) {
                long[] pattern = new long[words];
                long expected = 0;
                for (int i = 0; i < words; i++) {
                    pattern[i] = (long) round * 0x9E37_79B9_7F4A_7C15L + i;
                    expected += pattern[i];
                }
                ByteBuffer b = ByteBuffer.allocate(8 * words).order(ByteOrder.LITTLE_ENDIAN);
                b.asLongBuffer().put(pattern);
                r0.writeHeap(src.offset(), b.array());
                sum.fill((byte) 0);
                // The waiter spins first; then the data and the signal go as two triggers (not put_signal).
                r1.scratch().writeLong(0, 0);
                r1.kernel("ops", "gda4j_op_wait_checksum").launch(1, 256, 0, r1.stream(), KernelArgs.create()
                        .pointer(r1.deviceView()).i64(sig).i64(round).i64(dst.offset()).i64(words)
                        .pointer(sum.pointer()).pointer(r1.scratch().pointer()));
                r0.scratch().writeLong(0, 0);
                r0.kernel("ops", "gda4j_op_put_then_signal").launch(1, 256, 0, r0.stream(), KernelArgs.create()
                        .pointer(r0.deviceView()).i32(1).i64(dst.offset()).i64(src.offset()).i64(8L * words)
                        .i64(sig).i64(round).pointer(r0.scratch().pointer()));
                r0.stream().synchronize();
                r1.stream().synchronize();
                world.checkErrors();
                assertEquals(0, r0.scratch().readLong(0));
                assertEquals(expected, sum.readLong(0), "round " + round + ": the waiter saw the signal before the data");
            }
        }
    }

    @Test
    void flushCompletesTheBigCopyWhileTheOtherChannelKeepsFlowing() {
        Rank r0 = world.rank(0);
        Rank r1 = world.rank(1);
        long bytes = 16L << 20;
        int iterations = 64; // 1 GiB through one channel: milliseconds on the copy engine
        byte[] data = new byte[(int) bytes];
        new Random(9).nextBytes(data);
        r0.writeHeap(src.offset(), data);
        r1.fillHeap(dst.offset(), bytes, POISON);
        long sig = signals.word(5);
        r0.writeHeapLong(sig, 0);
        r0.scratch().writeLong(0, 0);
        r0.kernel("bench", "gda4j_put_bandwidth").launch(1, 256, 0, r0.stream(), KernelArgs.create()
                .pointer(r0.deviceView()).i32(1).i64(dst.offset()).i64(src.offset()).i64(bytes).i64(bytes)
                .u32(iterations).pointer(r0.scratch().pointer()));
        // Channel 1 -> 0 is served by the same proxy thread while 0 -> 1's FLUSH waits on the copy engine.
        ops.signal(1, 0, sig, SignalOp.SET, 77);
        boolean bigStillRunning = !r0.stream().isComplete();
        assertEquals(77, r0.readHeapLong(sig), "a flushed signal on the other channel had not landed");
        r0.stream().synchronize();
        world.checkErrors();
        assertEquals(0, r0.scratch().readLong(0));
        // The kernel returned from its flush: the data must be there with no further synchronisation.
        byte[] got = new byte[(int) bytes];
        r1.readHeap(dst.offset(), got);
        assertArrayEquals(data, got);
        if (Cuda.deviceCount() >= 2) {
            assertTrue(bigStillRunning, "the 1 GiB flush finished before a small signal on the other channel: the "
                    + "proxy may have waited on the copy engine instead of flowing");
        }
    }

    @Test
    void quietFlushesEveryProxyPeer() {
        long before = channel(world, 0, 1).popped();
        ops.quiet(0);
        assertTrue(channel(world, 0, 1).popped() > before, "quiet pushed no FLUSH to the proxy peer");
    }

    @Test
    void outOfRangeCallsNeverReachTheRing() {
        Rank r0 = world.rank(0);
        ProxyChannel ch = channel(world, 0, 1);
        long claimed = ch.claimed();
        long popped = ch.popped();
        long end = world.heap().sizeBytes();
        r0.scratch().writeLong(0, 0);
        r0.kernel("ops", "gda4j_op_put").launch(1, 32, 0, r0.stream(), KernelArgs.create()
                .pointer(r0.deviceView()).i32(1).i64(end - 8).i64(src.offset()).i64(64).u32(Scope.WARP.code())
                .i32(0).i64(0).u32(0).i64(0).pointer(r0.scratch().pointer()));
        r0.stream().synchronize();
        DeviceErrorException e = assertThrows(DeviceErrorException.class, world::checkErrors);
        assertEquals(Code.OUT_OF_RANGE.value(), e.record().code());
        assertEquals(claimed, ch.claimed(), "a refused put claimed a FIFO slot");
        assertEquals(popped, ch.popped());
        world.clearErrors();
    }

    @Test
    void putInlineIsRefusedWithAReason() {
        DeviceErrorException e = assertThrows(DeviceErrorException.class,
                () -> ops.putInline(0, 1, signals.word(6), 1, 1));
        assertEquals(Code.UNSUPPORTED_TRANSPORT.value(), e.record().code());
        assertTrue(e.getMessage().contains("put_inline needs direct stores"), e.getMessage());
        world.clearErrors();
    }

    @Test
    void aStoppedProxyFailsFlushesAtOnceAndWaitsTimeOutNamingIt() {
        try (LocalWorld w = proxyWorld(8L << 20, Duration.ofMillis(500), Map.of())) {
            DeviceOps o = new DeviceOps(w);
            HeapBuffer b = w.heap().allocate(1 << 20);
            long sig = w.heap().allocateSignals(1).word(0);
            channel(w, 0, 1).service().close();
            long t0 = System.nanoTime();
            DeviceErrorException stopped = assertThrows(DeviceErrorException.class,
                    () -> o.putSignal(0, 1, b.offset(), b.offset(), 4096, Scope.BLOCK, sig, SignalOp.SET, 1));
            assertEquals(ProxyErrorDecoder.PROXY_STOPPED, stopped.record().code());
            assertTrue((System.nanoTime() - t0) / 1_000_000 < 450, "the flush waited instead of seeing the stop");
            assertTrue(stopped.getMessage().contains("proxy channel rank 0 -> rank 1 is closed"), stopped.getMessage());
            w.clearErrors();
            DeviceWaitTimeoutException timeout = assertThrows(DeviceWaitTimeoutException.class,
                    () -> o.waitUntil(1, sig, Cmp.GE, 1));
            assertTrue(timeout.getMessage().contains("Transport problems") && timeout.getMessage().contains("proxy"),
                    timeout.getMessage());
            w.clearErrors();
        }
    }

    @Test
    void aDeadProxyThreadStopsTheWaitsWithAMessageThatNamesIt() {
        try (LocalWorld w = proxyWorld(8L << 20, Duration.ofSeconds(5), Map.of())) {
            DeviceOps o = new DeviceOps(w);
            long sig = w.heap().allocateSignals(1).word(0);
            ProxyService service = channel(w, 0, 1).service();
            ProxyThread thread = service.threads().get(0);
            ByteBuffer region = ByteBuffer.allocateDirect(TriggerFifoDescriptor.regionBytes(2));
            Channel killer = new Channel("test killer", new TriggerFifo(region, 2), (p, w0, w1, n0, n1) -> {
                throw new OutOfMemoryError("simulated death of the proxy thread");
            }, 1, null);
            service.add(killer, 0);
            new SimulatedDeviceProducer(region, 2, false).push(
                    TriggerFifoDescriptor.controlWord0(TriggerFifoDescriptor.KIND_NOP), 0, 1_000_000_000L);
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (thread.isAlive() && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertFalse(thread.isAlive(), "the proxy thread survived an Error");
            DeviceErrorException e = assertThrows(DeviceErrorException.class, () -> o.waitUntil(1, sig, Cmp.GE, 1));
            assertTrue(e.getMessage().contains(thread.name()) && e.getMessage().contains("died"), e.getMessage());
            w.clearErrors();
            assertThrows(RuntimeException.class, w::close, "closing reports the channels the dead thread left");
        }
    }

    @Test
    void closingTheWorldStopsTheProxyThreads() {
        LocalWorld w = proxyWorld(8L << 20, Duration.ofSeconds(5), Map.of(ProxyConfig.THREADS_PROP_NAME, "2"));
        ProxyService service = channel(w, 0, 1).service();
        assertEquals(2, service.threads().size());
        w.close();
        assertTrue(service.isClosed());
        for (ProxyThread r : service.threads()) {
            assertFalse(r.isAlive(), r.name() + " outlived its world");
        }
    }

    @Test
    void signalsThroughAStreamOnThePeersGpuKeepTheOrder() {
        try (LocalWorld w = proxyWorld(HEAP, Duration.ofSeconds(10),
                Map.of(ProxyConfig.SIGNAL_PATH_PROP_NAME, "peer-stream"))) {
            assertTrue(channel(w, 0, 1).peerStreamSignals());
            DeviceOps o = new DeviceOps(w);
            HeapBuffer s = w.heap().allocate(4L << 20);
            HeapBuffer d = w.heap().allocate(4L << 20);
            long sig = w.heap().allocateSignals(1).word(0);
            Random rnd = new Random(3);
            for (int round = 1; round <= 10; round++) {
                byte[] data = new byte[1 + rnd.nextInt(4 << 20)];
                rnd.nextBytes(data);
                w.rank(0).writeHeap(s.offset(), data);
                o.putSignal(0, 1, d.offset(), s.offset(), data.length, Scope.WARP, sig, SignalOp.ADD, 1);
                assertEquals(round, o.waitUntil(1, sig, Cmp.GE, round));
                byte[] got = new byte[data.length];
                w.rank(1).readHeap(d.offset(), got);
                assertArrayEquals(data, got, "round " + round);
            }
            checkManyWarps(w, o, s, d, w.heap().allocateSignals(1).word(0), 8, 4, 8);
        }
    }
}
