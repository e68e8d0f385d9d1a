package io.gda4j.ibgda;

import io.gda4j.transport.Transport;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.cuda.DevicePointer;
import io.gda4j.cuda.KernelArgs;
import io.gda4j.nic.NicConfig;
import io.gda4j.nic.emulated.EmulatedNicConfig;
import io.gda4j.world.AtomicRouting;
import io.gda4j.world.DeviceErrorException;
import io.gda4j.world.DeviceOps;
import io.gda4j.world.DeviceViewDescriptor;
import io.gda4j.world.ErrorRecordDescriptor.Code;
import io.gda4j.world.GpuWorlds;
import io.gda4j.world.HeapBuffer;
import io.gda4j.world.LocalWorld;
import io.gda4j.world.Rank;
import io.gda4j.world.SignalOp;
import io.gda4j.world.WorldConfig;

import jcuda.Pointer;
import jcuda.driver.JCudaDriver;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Atomics on one word go through one path (issue 8, item 4), on a GPU through the emulated NIC with strict atomics (a
 * NIC atomic is a read, a pause and a write): four ranks on one GPU, the rank itself among them, add to one counter
 * through the device API and the sum is exact (its own adds go through its loopback QP); the same race with the rank
 * adding by plain GPU atomics instead loses updates (so the strict mode bites), and loses none with strict atomics
 * off (so the mode is what bites); a GPU ADD to a rank with IBGDA links from a p2p entry is refused.
 */
@Tag("gpu")
@Timeout(180)
class IbgdaAtomicsGpuTest {
    static final long HEAP = 8L << 20;
    static final int RANKS = 4;
    static final int ADDS = 300;

    static LocalWorld world(boolean strictAtomics) {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
        System.setProperty(NicConfig.NIC_PROP_NAME, "emulated");
        System.setProperty(EmulatedNicConfig.STRICT_ATOMICS_PROP_NAME, Boolean.toString(strictAtomics));
        try {
            LocalWorld w = LocalWorld.create(WorldConfig.builder().gpus(GpuWorlds.gpus(RANKS, true))
                    .heapSizeBytes(HEAP).waitTimeout(Duration.ofSeconds(20)).transport(Transport.IBGDA.label()).build());
            w.loadModules("ibgda", "ops"); // before kernels that wait for each other
            return w;
        } finally {
            System.clearProperty(NicConfig.NIC_PROP_NAME);
            System.clearProperty(EmulatedNicConfig.STRICT_ATOMICS_PROP_NAME);
        }
    }

    static long selfHandle(Rank r) {
        long[] h = new long[1];
        r.context().makeCurrent();
        JCudaDriver.cuMemcpyDtoH(Pointer.to(h), DevicePointer.of(r.deviceView().address()
                + DeviceViewDescriptor.peerEntryOffset(r.rank()) + DeviceViewDescriptor.PEER_HANDLE_OFFSET), Long.BYTES);
        return h[0];
    }

    static void finish(LocalWorld w, List<DeviceMemory> status) {
        for (Rank r : w.localRanks()) {
            r.stream().synchronize();
        }
        w.checkErrors();
        for (int r = 0; r < status.size(); r++) {
            assertEquals(0, status.get(r).readLong(0) & 0xffffffffL, "rank " + r + " status");
        }
    }

    @Test
    void everyRankAndTheRankItselfAddingThroughTheApiKeepAnExactSum() {
        try (LocalWorld w = world(true)) {
            HeapBuffer counter = w.heap().allocateSignals(1);
            HeapBuffer data = w.heap().allocate(4096);
            Rank r0 = w.rank(0);
            r0.fillHeap(counter.offset(), 8, (byte) 0);
            long self = selfHandle(r0);
            assertEquals(AtomicRouting.PEER_NIC_ATOMICS, self & AtomicRouting.PEER_HANDLE_FLAGS,
                    "rank 0's SELF entry routes its ADDs through its loopback QP");
            everyRankAdds(w, counter, data, ADDS);
            assertEquals((long) RANKS * ADDS, r0.readHeapLong(counter.offset()),
                    "IBGDA peers and the rank itself added to one counter through the API: every add counts");
        }
    }

    /**
     * Every rank adds 1 to rank 0's {@code counter} {@code adds} times through the API ({@code gda4j_ibgda_add_counter},
     * with puts into {@code data} between), then every stream is idle and every rank's status is 0. Shared with the
     * mlx5 test.
     */
    static void everyRankAdds(LocalWorld w, HeapBuffer counter, HeapBuffer data, int adds) {
        List<DeviceMemory> status = new ArrayList<>();
        try {
            for (Rank r : w.localRanks()) {
                DeviceMemory s = r.context().allocate(8);
                s.fill((byte) 0x7f);
                status.add(s);
            }
            for (Rank r : w.localRanks()) {
                r.kernel("ibgda", "gda4j_ibgda_add_counter").launch(1, 1, 0, r.stream(), KernelArgs.create()
                        .pointer(r.deviceView()).i32(0).i64(counter.offset()).i64(data.offset()).i32(adds)
                        .pointer(status.get(r.rank()).pointer()));
            }
            finish(w, status);
        } finally {
            status.forEach(DeviceMemory::close);
        }
    }

    /** Rank 0 adds with plain GPU atomics while ranks 1..3 add over IBGDA; returns {expected sum, counter}. */
    static long[] rawRace(LocalWorld w) {
        HeapBuffer words = w.heap().allocateSignals(2);
        long counter = words.word(0);
        long done = words.word(1);
        Rank r0 = w.rank(0);
        r0.fillHeap(words.offset(), 16, (byte) 0);
        List<DeviceMemory> status = new ArrayList<>();
        try (DeviceMemory rawAdds = r0.context().allocate(8)) {
            for (Rank r : w.localRanks()) {
                DeviceMemory s = r.context().allocate(8);
                s.fill((byte) 0x7f);
                status.add(s);
            }
            r0.kernel("ibgda", "gda4j_ibgda_raw_add_until").launch(1, 1, 0, r0.stream(), KernelArgs.create()
                    .pointer(r0.deviceView()).i64(counter).i64(done).i64(RANKS - 1).pointer(rawAdds.pointer())
                    .pointer(status.get(0).pointer()));
            for (Rank r : w.localRanks()) {
                if (r.rank() != 0) {
                    r.kernel("ibgda", "gda4j_ibgda_add_then_done").launch(1, 1, 0, r.stream(), KernelArgs.create()
                            .pointer(r.deviceView()).i32(0).i64(counter).i64(done).i32(ADDS)
                            .pointer(status.get(r.rank()).pointer()));
                }
            }
            finish(w, status);
            long raw = rawAdds.readLong(0);
            assertTrue(raw > 0, "rank 0 added while its peers did");
            return new long[] {(long) (RANKS - 1) * ADDS + raw, r0.readHeapLong(counter)};
        } finally {
            status.forEach(DeviceMemory::close);
        }
    }

    @Test
    void plainGpuAtomicsBesideNicAtomicsLoseUpdatesUnderStrictAtomics() {
        try (LocalWorld w = world(true)) {
            long[] r = rawRace(w);
            assertTrue(r[1] < r[0], "the emulated NIC's strict atomics let a GPU atomic between an ATOMIC_FA's read"
                    + " and its write survive: expected lost updates, but the counter holds all " + r[0] + " adds");
        }
    }

    @Test
    void theSameRaceLosesNothingWithStrictAtomicsOff() {
        try (LocalWorld w = world(false)) {
            long[] r = rawRace(w);
            assertEquals(r[0], r[1], "system-scope GPU atomics for NIC atomics: nothing lost (the lenient model)");
        }
    }

    @Test
    void aGpuAddFromAP2pEntryToARankWithIbgdaLinksIsRefused() {
        try (LocalWorld w = world(true)) {
            DeviceOps ops = new DeviceOps(w);
            HeapBuffer sig = w.heap().allocateSignals(1);
            Rank r0 = w.rank(0);
            Rank r1 = w.rank(1);
            r0.fillHeap(sig.offset(), 8, (byte) 0);
            // No LocalWorld mixes p2p with ibgda here (forced transport), so rank 1's entry for rank 0 is made a p2p
            // entry the way AtomicRouting marks one (the ranks share a GPU: rank 0's heap is addressable as is).
            long entry = r1.deviceView().address() + DeviceViewDescriptor.peerEntryOffset(0);
            r1.context().makeCurrent();
            JCudaDriver.cuMemcpyHtoD(DevicePointer.of(entry + DeviceViewDescriptor.PEER_TRANSPORT_OFFSET),
                    Pointer.to(new int[] {Transport.P2P.code()}), Integer.BYTES);
            JCudaDriver.cuMemcpyHtoD(DevicePointer.of(entry + DeviceViewDescriptor.PEER_HEAP_OFFSET),
                    Pointer.to(new long[] {r0.heapBase(), AtomicRouting.PEER_NIC_ATOMICS}), 2 * Long.BYTES);
            // The entry carries its transport's capability bits, which kernels ask (is the peer direct?): p2p's.
            JCudaDriver.cuMemcpyHtoD(DevicePointer.of(entry + DeviceViewDescriptor.PEER_CAPS_OFFSET),
                    Pointer.to(new int[] {Transport.P2P.capabilityBits()}), Integer.BYTES);
            DeviceErrorException e = assertThrows(DeviceErrorException.class,
                    () -> ops.signal(1, 0, sig.offset(), SignalOp.ADD, 1));
            assertEquals(Code.MIXED_ATOMICS.value(), e.record().code(), e.getMessage());
            assertEquals(0, r0.readHeapLong(sig.offset()), "the refused ADD wrote nothing");
            w.clearErrors();
            ops.signal(1, 0, sig.offset(), SignalOp.SET, 5);
            assertEquals(5, r0.readHeapLong(sig.offset()), "a SET signal is a plain store: still served");
        }
    }
}
