package io.gda4j.proxy;

import io.gda4j.nic.CqeErrorRecord;
import io.gda4j.transport.Transport;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.nic.NicConfig;
import io.gda4j.world.Cmp;
import io.gda4j.world.DeviceErrorException;
import io.gda4j.world.DeviceOps;
import io.gda4j.world.HeapBuffer;
import io.gda4j.world.LocalWorld;
import io.gda4j.world.Rank;
import io.gda4j.world.Scope;
import io.gda4j.world.SignalOp;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The proxy transport with the verbs handler forced ({@code GDA4J_PROXY_HANDLER=verbs}) on the emulated NIC, two
 * ranks of one process on real GPUs: the device API's puts land byte-exact, signals and atomics sum exactly, many
 * warps' triggers all land, links say which handler serves them, and a peer whose heap registration is gone (it died)
 * comes back as a CQE_ERROR device error record naming it.
 */
@RequiresCuda
@Tag("gpu")
class ProxyVerbsGpuTest {
    static final long HEAP = 64L << 20;
    static final byte POISON = (byte) 0xA5;
    static final Map<String, String> VERBS = Map.of(ProxyConfig.HANDLER_PROP_NAME, "verbs",
            NicConfig.NIC_PROP_NAME, "emulated");
    static LocalWorld world;
    static DeviceOps ops;
    static HeapBuffer src;
    static HeapBuffer dst;
    static HeapBuffer signals;

    @BeforeAll
    static void setUp() {
        world = ProxyGpuTest.proxyWorld(HEAP, Duration.ofSeconds(10), VERBS);
        ops = new DeviceOps(world);
        world.loadModules("bench");
        src = world.heap().allocate(16L << 20);
        dst = world.heap().allocate(16L << 20);
        signals = world.heap().allocateSignals(16);
    }

    @AfterAll
    static void tearDown() {
        if (world != null) {
            world.close();
        }
    }

    @BeforeEach
    void clean() {
        world.clearErrors();
    }

    @Test
    void everyPairIsAProxyLinkServedByTheVerbsHandlerOnTheEmulatedNic() {
        assertEquals(Transport.PROXY, world.transport(0, 1));
        assertEquals(Transport.PROXY, world.transport(1, 0));
        for (int[] pair : new int[][] {{0, 1}, {1, 0}}) {
            String label = ProxyTransport.handlerOf(world.rank(pair[0]), pair[1]).orElseThrow();
            assertTrue(label.startsWith("verbs on the emulated NIC"), label);
        }
        assertTrue(ProxyTransport.nicOf(world.rank(0)).orElseThrow().isEmulated());
        VerbsSession session = ProxyGpuTest.channel(world, 0, 1).verbsSession();
        assertTrue(session == ProxyGpuTest.channel(world, 1, 0).verbsSession(), "one session per world");
        assertEquals(2, session.heapRegistrations(), "each heap registered once on the NIC");
        assertEquals(List.of(), world.rank(0).linkProblems());
    }

    @ParameterizedTest
    @EnumSource(Scope.class)
    void putsMoveExactlyTheirBytes(Scope scope) {
        Random rnd = new Random(7 + scope.ordinal());
        for (long size : new long[] {1, 7, 8, 63, 64, 4097, 65_536 + 3, 1 << 20, 3 << 20}) {
            checkPut(scope, (int) size, src.offset() + rnd.nextInt(64), dst.offset() + 64 + rnd.nextInt(64), rnd,
                    size % 2 == 1);
        }
    }

    private void checkPut(Scope scope, int size, long srcOff, long dstOff, Random rnd, boolean withSignal) {
        Rank r0 = world.rank(0);
        Rank r1 = world.rank(1);
        byte[] data = new byte[size];
        rnd.nextBytes(data);
        r0.writeHeap(srcOff, data);
        int margin = 64;
        r1.fillHeap(dstOff - margin, size + 2L * margin, POISON);
        if (withSignal) {
            long sig = signals.word(0);
            r1.writeHeapLong(sig, 0);
            ops.putSignal(0, 1, dstOff, srcOff, size, scope, sig, SignalOp.SET, 7);
            assertEquals(7, ops.waitUntil(1, sig, Cmp.EQ, 7));
        } else {
            ops.put(0, 1, dstOff, srcOff, size, scope); // ends with a flush: the bytes are there on return
        }
        byte[] got = new byte[size];
        r1.readHeap(dstOff, got);
        assertArrayEquals(data, got, scope + " put of " + size + " bytes");
        byte[] around = new byte[margin];
        r1.readHeap(dstOff - margin, around);
        for (byte b : around) {
            assertEquals(POISON, b, "bytes before the destination were written");
        }
        r1.readHeap(dstOff + size, around);
        for (byte b : around) {
            assertEquals(POISON, b, "bytes after the destination were written");
        }
    }

    @Test
    void signalsAndAtomicsSumExactly() {
        long sig = signals.word(2);
        ops.signal(1, 0, sig, SignalOp.SET, 123_456_789_012L);
        assertEquals(123_456_789_012L, ops.waitUntil(0, sig, Cmp.GE, 123_456_789_012L));
        ops.signal(1, 0, sig, SignalOp.ADD, 1);
        ops.flush(1, 0);
        assertEquals(123_456_789_013L, world.rank(0).readHeapLong(sig));
        ops.signal(1, 0, sig, SignalOp.SET, -1L);
        ops.flush(1, 0);
        assertEquals(-1L, world.rank(0).readHeapLong(sig), "all 64 bits of the value travel");
        long sum = signals.word(3);
        world.rank(1).writeHeapLong(sum, 0);
        ops.signalAddFromGrid(0, 1, sum, 3, 4, 64, 4); // more messages than the credit window: grants renew
        assertEquals(3L * 4 * 64 * 4, world.rank(1).readHeapLong(sum));
    }

    @Test
    void thousandsOfTriggersFromManyWarpsAllLand() {
        ProxyGpuTest.checkManyWarps(world, ops, src, dst, signals.word(1), 64, 4, 16);
    }

    @Test
    void aDeadPeerComesBackAsACqeErrorNamingIt() {
        try (LocalWorld w = ProxyGpuTest.proxyWorld(16L << 20, Duration.ofSeconds(5), VERBS)) {
            DeviceOps o = new DeviceOps(w);
            HeapBuffer b = w.heap().allocate(1 << 20);
            long sig = w.heap().allocateSignals(1).word(0);
            o.put(0, 1, b.offset(), b.offset(), 4096, Scope.THREAD);
            ProxyGpuTest.channel(w, 0, 1).verbsSession().heapRegistration(1).close(); // rank 1's NIC forgot its heap
            DeviceErrorException e = assertThrows(DeviceErrorException.class,
                    () -> o.putSignal(0, 1, b.offset(), b.offset(), 4096, Scope.BLOCK, sig, SignalOp.SET, 1));
            assertEquals(CqeErrorRecord.CODE, e.record().code(), e.getMessage());
            assertEquals(1, e.record().peer(), e.getMessage());
            assertTrue(e.getMessage().contains("REMOTE_ACCESS"), e.getMessage());
            String problems = String.join("; ", w.rank(0).linkProblems());
            assertTrue(problems.contains("Rank 1 refused the key or the range"), problems);
            w.clearErrors();
            assertThrows(RuntimeException.class, w::close, "closing reports the failed channel");
        }
    }
}
