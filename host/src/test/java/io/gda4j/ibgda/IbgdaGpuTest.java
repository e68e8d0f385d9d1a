package io.gda4j.ibgda;

import io.gda4j.cuda.RequiresCuda;
import io.gda4j.transport.Transport;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gda4j.config.Settings;
import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.KernelArgs;
import io.gda4j.mlx5.CqeSyndrome;
import io.gda4j.nic.Nic;
import io.gda4j.nic.NicConfig;
import io.gda4j.nic.emulated.EmulatedNic;
import io.gda4j.nic.emulated.EngineStats;
import io.gda4j.world.DeviceErrorException;
import io.gda4j.world.DeviceOps;
import io.gda4j.world.GpuWorlds;
import io.gda4j.world.HeapBuffer;
import io.gda4j.world.LocalWorld;
import io.gda4j.world.Rank;
import io.gda4j.world.Scope;
import io.gda4j.world.SignalOp;
import io.gda4j.world.TransportConformanceGpuTest;
import io.gda4j.world.WorldConfig;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Random;

/**
 * The IBGDA device API on real GPUs through the emulated NIC: kernels build the WQEs and ring the doorbell, the
 * engine executes them. The transport conformance suite, then every byte of gets checked, inline writes of every
 * shape, atomics from many threads summed, send-queue and 16-bit counter wrap, and each fault class as an exception
 * naming the QP, the WQE index, the opcode and the syndrome.
 */
@RequiresCuda
@Tag("gpu")
class IbgdaGpuTest extends TransportConformanceGpuTest {
    static final long HEAP = 8L << 20;

    IbgdaGpuTest() {
        // put_signal ends with quiet: its signal is in the peer's heap when the call returns.
        super(new Trial(Transport.IBGDA, 3L << 20, 2, 7,
                1, 7, 8, 15, 16, 17, 31, 63, 64, 100, 255, 4096, 4097, 65_539, 1 << 20, (1 << 20) + 5)
                .signalLandedOnReturn().loading("ibgda"));
    }

    /** Two ranks on GPUs 0 and 1 (or both on GPU 0) connected by ibgda on the emulated NIC. */
    static LocalWorld ibgdaWorld(String flush) {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
        List<Integer> gpus = GpuWorlds.gpus();
        System.setProperty(NicConfig.NIC_PROP_NAME, "emulated");
        System.setProperty(IbgdaConfig.FLUSH_PROP_NAME, flush);
        try {
            return LocalWorld.create(WorldConfig.builder().gpus(gpus).heapSizeBytes(HEAP)
                    .waitTimeout(Duration.ofSeconds(10)).transport(Transport.IBGDA.label()).build());
        } finally {
            System.clearProperty(NicConfig.NIC_PROP_NAME);
            System.clearProperty(IbgdaConfig.FLUSH_PROP_NAME);
        }
    }

    @Override
    protected LocalWorld createWorld() {
        return ibgdaWorld("auto");
    }

    static EmulatedNic nic(LocalWorld w) {
        Nic nic = IbgdaTransport.nicOf(w.rank(0)).orElseThrow();
        assertTrue(nic.isEmulated(), nic.description());
        return (EmulatedNic) nic;
    }

    @Test
    void theRanksPostOnTheEmulatedNic() {
        assertTrue(nic(world).description().contains("emulated"));
    }

    @Test
    void inlineWritesOfEveryLengthLand() {
        Random rnd = new Random(3);
        Rank r0 = world.rank(0);
        Rank r1 = world.rank(1);
        for (int length : new int[] {1, 4, 8, 12, 16, 17, 28, 29, 60, 100, 200}) {
            byte[] payload = new byte[length];
            rnd.nextBytes(payload);
            r0.writeHeap(src.offset(), payload);
            r1.fillHeap(dst.offset(), 512, POISON);
            raw(world, Raw.WRITE_INLINE, dst.offset() + 8, Raw.QP_KEY, src.offset(), Raw.QP_KEY, length, 0);
            byte[] got = new byte[length];
            r1.readHeap(dst.offset() + 8, got);
            assertArrayEquals(payload, got, length + "-byte inline write");
            byte[] after = new byte[1];
            r1.readHeap(dst.offset() + 8 + length, after);
            assertEquals(POISON, after[0], "nothing after the inline payload");
        }
        for (int seq = 1; seq <= 5; seq++) { // put_inline: the 16-byte {lo, seq, hi, seq} slot
            ops.putInline(0, 1, signals.word(2), 0x1122334455667788L * seq, seq);
            assertEquals(0x1122334455667788L * seq, ops.waitInline(1, signals.word(2), seq));
        }
    }

    @Test
    void getsReadExactlyTheirBytes() {
        Random rnd = new Random(11);
        Rank r0 = world.rank(0);
        Rank r1 = world.rank(1);
        for (int size : new int[] {1, 8, 9, 255, 4096, 65_537, 1 << 20}) {
            byte[] data = new byte[size];
            rnd.nextBytes(data);
            long remote = src.offset() + rnd.nextInt(64);
            long local = dst.offset() + 64 + rnd.nextInt(64);
            r1.writeHeap(remote, data);
            r0.fillHeap(dst.offset(), dst.sizeBytes(), POISON);
            Rank r = world.rank(0);
            r.scratch().writeLong(0, 0);
            r.kernel("ibgda", "gda4j_ibgda_get").launch(1, 1, 0, r.stream(), KernelArgs.create()
                    .pointer(r.deviceView()).i32(1).i64(local).i64(remote).i64(size).pointer(r.scratch().pointer()));
            finish(world, r);
            byte[] got = new byte[size + 2];
            r0.readHeap(local - 1, got);
            assertEquals(POISON, got[0]);
            assertEquals(POISON, got[size + 1]);
            for (int i = 0; i < size; i++) {
                assertEquals(data[i], got[i + 1], size + "-byte get, byte " + i);
            }
        }
    }

    @Test
    void atomicsFromManyThreadsSumExactly() {
        world.rank(1).writeHeapLong(signals.word(4), 5);
        ops.signalAddFromGrid(0, 1, signals.word(4), 3, 8, 128, 4); // 4096 ATOMIC_FA WQEs from 1024 threads
        assertEquals(5 + 3L * 8 * 128 * 4, world.rank(1).readHeapLong(signals.word(4)));
        ops.signal(0, 1, signals.word(5), SignalOp.SET, 77);
        assertEquals(77, world.rank(1).readHeapLong(signals.word(5)));
        ops.signal(0, 1, signals.word(5), SignalOp.ADD, 3);
        assertEquals(80, world.rank(1).readHeapLong(signals.word(5)));
    }

    @Test
    void sendQueueAndSixteenBitCountersWrap() {
        int depth = IbgdaConfig.resolve(Settings.ofProcess()).sqWqebbs();
        int total = 70_000; // > 65,536 WQEs, > 4x the send queue
        Rank r0 = world.rank(0);
        Rank r1 = world.rank(1);
        byte[] data = new byte[total * 8];
        new Random(5).nextBytes(data);
        r0.writeHeap(src.offset(), data);
        r1.fillHeap(dst.offset(), data.length, POISON);
        EngineStats before = nic(world).stats();
        putMany(1, 1, total); // one thread, in order
        byte[] got = new byte[data.length];
        r1.readHeap(dst.offset(), got);
        assertArrayEquals(data, got, "70,000 8-byte puts through a " + depth + "-WQEBB ring");
        assertTrue(nic(world).stats().since(before).wqes() >= total);

        // Many threads and warps reserving at once: 16 blocks x 128 threads x 10 puts.
        new Random(6).nextBytes(data);
        r0.writeHeap(src.offset(), data);
        r1.fillHeap(dst.offset(), data.length, POISON);
        putMany(16, 128, 10);
        byte[] some = new byte[16 * 128 * 10 * 8];
        r1.readHeap(dst.offset(), some);
        for (int i = 0; i < some.length; i++) {
            assertEquals(data[i], some[i], "concurrent puts, byte " + i);
        }
    }

    private void putMany(int blocks, int threads, int perThread) {
        Rank r = world.rank(0);
        r.scratch().writeLong(0, 0);
        r.kernel("ibgda", "gda4j_ibgda_put_many").launch(blocks, threads, 0, r.stream(), KernelArgs.create()
                .pointer(r.deviceView()).i32(1).i64(dst.offset()).i64(src.offset()).i64(8).u32(perThread).i64(8)
                .pointer(r.scratch().pointer()));
        finish(world, r);
    }

    // ---- faults: each class in a world of its own (an error leaves the QP in the error state for good) ---------

    /** Raw WQE kinds of kernels/ibgda.cu. */
    static final class Raw {
        static final int WRITE = 0;
        static final int READ = 1;
        static final int FETCH_ADD = 2;
        static final int WRITE_INLINE = 3;
        static final int BAD_DS = 4;
        static final int UNKNOWN_OPCODE = 5;
        static final int WRITE_IMM = 6;
        static final int WRITE_FLUSH_FLAG = 7;
        static final int QP_KEY = 0xffffffff;
    }

    static void raw(LocalWorld w, int kind, long raddrOffset, int rkey, long laddrOffset, int lkey, int bytes,
                    long operand) {
        Rank r = w.rank(0);
        r.scratch().writeLong(0, 0);
        r.kernel("ibgda", "gda4j_ibgda_raw").launch(1, 1, 0, r.stream(), KernelArgs.create().pointer(r.deviceView())
                .i32(1).u32(kind).i64(raddrOffset).u32(rkey).i64(laddrOffset).u32(lkey).u32(bytes).i64(operand)
                .pointer(r.scratch().pointer()));
        finish(w, r);
    }

    static void finish(LocalWorld w, Rank r) {
        r.stream().synchronize();
        w.checkErrors();
        assertEquals(0, (int) r.scratch().readLong(0), "device status");
    }

    void assertFault(String flush, CqeSyndrome syndrome, String opcode, String emulatedReason, int kind,
                     long raddrOffset, int rkey, long laddrOffset, int lkey, int bytes) {
        assertFault(flush, syndrome, opcode, w -> emulatedReason, kind, raddrOffset, rkey, laddrOffset, lkey, bytes);
    }

    void assertFault(String flush, CqeSyndrome syndrome, String opcode,
                     java.util.function.Function<LocalWorld, String> reasonIn, int kind, long raddrOffset, int rkey,
                     long laddrOffset, int lkey, int bytes) {
        LocalWorld w = ibgdaWorld(flush);
        String emulatedReason = reasonIn.apply(w);
        try {
            DeviceErrorException e = assertThrows(DeviceErrorException.class,
                    () -> raw(w, kind, raddrOffset, rkey, laddrOffset, lkey, bytes, 1));
            String text = e.getMessage();
            assertEquals(IbgdaErrorDecoder.CQE_ERROR, e.record().code(), text);
            assertTrue(text.contains("RDMA completion error on QP 0x"), text);
            assertTrue(text.contains("WQE index 0 (" + opcode + ")"), text);
            assertTrue(text.contains(syndrome.name() + String.format(" (0x%02x)", syndrome.code())), text);
            assertTrue(text.contains("Emulated NIC: " + emulatedReason), text);
            assertTrue(text.contains("rank 0") && text.contains("peer 1"), text);
        } finally {
            w.close();
        }
    }

    @Test
    void unknownRkeyIsARemoteAccessError() {
        assertFault("auto", CqeSyndrome.REMOTE_ACCESS, "RDMA_WRITE", "the rkey names no registered region",
                Raw.WRITE, dst.offset(), 0x12345678, src.offset(), Raw.QP_KEY, 8);
    }

    @Test
    void remoteAddressOutsideTheHeapIsARemoteAccessError() {
        assertFault("auto", CqeSyndrome.REMOTE_ACCESS, "RDMA_WRITE", "the remote address range lies outside",
                Raw.WRITE, HEAP - 4, Raw.QP_KEY, src.offset(), Raw.QP_KEY, 8);
    }

    @Test
    void missingRemoteWriteRightIsARemoteAccessError() {
        // The flush flag is rank 0's own region: its rkey means something at rank 1 only where both ranks share a
        // NIC (one GPU); with a NIC per GPU (the strict emulated NIC on two GPUs) the responder knows no such key.
        assertFault("always", CqeSyndrome.REMOTE_ACCESS, "RDMA_WRITE", w -> IbgdaTransport.nicOf(w.rank(0))
                        .equals(IbgdaTransport.nicOf(w.rank(1))) ? "the remote region lacks the access right"
                        : "the rkey names no registered region",
                Raw.WRITE_FLUSH_FLAG, 0, Raw.QP_KEY, src.offset(), Raw.QP_KEY, 8);
    }

    @Test
    void badLkeyIsALocalProtectionError() {
        assertFault("auto", CqeSyndrome.LOCAL_PROT, "RDMA_WRITE", "the lkey names no registered region",
                Raw.WRITE, dst.offset(), Raw.QP_KEY, src.offset(), 0x777, 8);
    }

    @Test
    void readIntoMemoryOutsideTheHeapIsALocalProtectionError() {
        assertFault("auto", CqeSyndrome.LOCAL_PROT, "RDMA_READ", "the local address range lies outside",
                Raw.READ, src.offset(), Raw.QP_KEY, HEAP + 64, Raw.QP_KEY, 8);
    }

    @Test
    void misalignedAtomicIsAnInvalidRequest() {
        assertFault("auto", CqeSyndrome.REMOTE_INVAL_REQ, "ATOMIC_FA", "the atomic's remote address is not 8-byte aligned",
                Raw.FETCH_ADD, signals.word(0) + 4, Raw.QP_KEY, signals.word(1), Raw.QP_KEY, 8);
    }

    @Test
    void malformedWqesAreLocalQpOperationErrors() {
        assertFault("auto", CqeSyndrome.LOCAL_QP_OP, "RDMA_WRITE", "malformed WQE",
                Raw.BAD_DS, dst.offset(), Raw.QP_KEY, src.offset(), Raw.QP_KEY, 8);
        assertFault("auto", CqeSyndrome.LOCAL_QP_OP, "0x7f (unknown)", "malformed WQE",
                Raw.UNKNOWN_OPCODE, 0, Raw.QP_KEY, 0, Raw.QP_KEY, 0);
    }

    @Test
    void writeWithImmediateNeedsAReceiveQueue() {
        assertFault("auto", CqeSyndrome.RNR_RETRY_EXC, "RDMA_WRITE_IMM", "WRITE_IMM needs a receive WQE",
                Raw.WRITE_IMM, dst.offset(), Raw.QP_KEY, src.offset(), Raw.QP_KEY, 8);
    }

    // ---- PCIe flush ---------------------------------------------------------------------------------------------

    @Test
    void quietWithTheFlushOnPostsNoFlushAfterPutsAlone() {
        // The PCIe flush orders a READ's landed data before its CQE; after puts alone there is nothing to flush
        // (IbgdaFlushGpuTest checks that a get is followed by the flush ATOMIC_FA).
        LocalWorld w = ibgdaWorld("always");
        try {
            assertTrue(IbgdaTransport.flushesOnQuiet(w.rank(0)));
            HeapBuffer a = w.heap().allocate(4096);
            HeapBuffer b = w.heap().allocate(4096);
            byte[] data = new byte[4096];
            new Random(9).nextBytes(data);
            w.rank(0).writeHeap(a.offset(), data);
            DeviceOps o = new DeviceOps(w);
            EngineStats before = nic(w).stats();
            o.put(0, 1, b.offset(), a.offset(), data.length, Scope.THREAD);
            EngineStats run = nic(w).stats().since(before);
            assertEquals(1, run.wqes(), "the WRITE alone: no get was outstanding, so quiet posts no flush");
            assertEquals(0, run.errors(), nic(w).faults().toString());
            byte[] got = new byte[data.length];
            w.rank(1).readHeap(b.offset(), got);
            assertArrayEquals(data, got);
        } finally {
            w.close();
        }
    }
}
