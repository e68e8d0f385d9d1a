package io.gda4j.ibgda;

import io.gda4j.transport.Transport;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.RequiresCuda;
import io.gda4j.nic.Nic;
import io.gda4j.nic.NicConfig;
import io.gda4j.verbs.Verbs;
import io.gda4j.verbs.VerbsStatus;
import io.gda4j.world.DeviceOps;
import io.gda4j.world.GpuWorlds;
import io.gda4j.world.HeapBuffer;
import io.gda4j.world.LocalWorld;
import io.gda4j.world.Scope;
import io.gda4j.world.SignalOp;
import io.gda4j.world.WorldConfig;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Random;

/**
 * The IBGDA device API on a real ConnectX: kernels write mlx5 WQEs into QPs of the NIC and store to its UAR doorbell
 * register mapped into the GPU; GPU memory is registered through dma-buf or nvidia-peermem. The same checks the
 * emulated NIC's tests make (bytes of every put, the signal after its data, the inline slot, the fence bit, the PCIe
 * flush after a get, exact atomic sums), here against hardware. Skipped, with the reason, where there is no CUDA
 * device or no mlx5 RDMA device; {@code samples/scripts/connectx-report.sh} runs it and explains its failures.
 */
@RequiresCuda
@Tag("gpu")
@Tag("rdma")
@Timeout(300)
class Mlx5IbgdaGpuTest {
    static final long HEAP = 8L << 20;

    /** Two ranks (GPUs 0 and 1, or both on GPU 0) connected by ibgda over the mlx5 NIC. */
    static LocalWorld mlx5World() {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
        VerbsStatus status = Verbs.status();
        assumeTrue(status.kind() == VerbsStatus.Kind.DEVICES_FOUND && status.mlx5Available(),
                () -> "no mlx5 RDMA device here: " + status.sentence());
        List<Integer> gpus = GpuWorlds.gpus();
        System.setProperty(NicConfig.NIC_PROP_NAME, "mlx5");
        try {
            LocalWorld w = LocalWorld.create(WorldConfig.builder().gpus(gpus).heapSizeBytes(HEAP)
                    .waitTimeout(Duration.ofSeconds(10)).transport(Transport.IBGDA.label()).build());
            w.loadModules("ibgda", "ops");
            assertEquals(Transport.IBGDA, w.transport(0, 1));
            Nic nic = IbgdaTransport.nicOf(w.rank(0)).orElseThrow();
            assumeTrue(!nic.isEmulated(), "the ibgda transport chose the emulated NIC: " + nic.description());
            return w;
        } finally {
            System.clearProperty(NicConfig.NIC_PROP_NAME);
        }
    }

    @Test
    void putSignalOfEverySizeAndScopeDeliversItsBytesAndItsSignal() {
        try (LocalWorld w = mlx5World()) {
            DeviceOps ops = new DeviceOps(w);
            HeapBuffer src = w.heap().allocate(1L << 20);
            HeapBuffer dst = w.heap().allocate(1L << 20);
            HeapBuffer signal = w.heap().allocateSignals(1);
            Random rnd = new Random(25);
            long expected = 0;
            for (Scope scope : Scope.values()) {
                for (int size : new int[] {1, 8, 64, 4097, 65_536, 1 << 20}) {
                    byte[] data = new byte[size];
                    rnd.nextBytes(data);
                    w.rank(0).writeHeap(src.offset(), data);
                    w.rank(1).fillHeap(dst.offset(), size, (byte) 0);
                    ops.putSignal(0, 1, dst.offset(), src.offset(), size, scope, signal.offset(), SignalOp.ADD, 1);
                    expected++;
                    byte[] got = new byte[size];
                    w.rank(1).readHeap(dst.offset(), got);
                    assertArrayEquals(data, got, scope + " put_signal of " + size + " bytes");
                    assertEquals(expected, w.rank(1).readHeapLong(signal.offset()), scope + " signal after " + size);
                }
            }
            ops.signal(0, 1, signal.offset(), SignalOp.SET, 7);
            assertEquals(7, w.rank(1).readHeapLong(signal.offset()), "SET signal (an inline WRITE)");
        }
    }

    @Test
    void inlineSlotUnderASenderThatDoesNotWait() {
        try (LocalWorld w = mlx5World()) {
            IbgdaOrderingGpuTest.inlineSlotNeverReturnsHalvesOfTwoMessages(w, 20_000);
        }
    }

    @Test
    void getThenPutSendsTheFetchedBytes() {
        try (LocalWorld w = mlx5World()) {
            IbgdaOrderingGpuTest.getThenPutSendsTheFetchedBytes(w);
        }
    }

    @Test
    void aGetIsVisibleAfterQuiet() {
        try (LocalWorld w = mlx5World()) {
            assertEquals(0, IbgdaFlushGpuTest.staleRounds(w), "quiet returned before the fetched bytes were"
                    + " visible in GPU memory: " + IbgdaTransport.describeFetchedValues(w.rank(0))
                    + "; with relaxed ordering or a data-direct NIC the PCIe flush (GDA4J_IBGDA_FLUSH=always) is"
                    + " needed");
        }
    }

    @Test
    void everyRankAddingToOneCounterKeepsAnExactSum() {
        try (LocalWorld w = mlx5World()) {
            int adds = 300;
            HeapBuffer counter = w.heap().allocateSignals(1);
            HeapBuffer data = w.heap().allocate(4096);
            w.rank(0).fillHeap(counter.offset(), 8, (byte) 0);
            IbgdaAtomicsGpuTest.everyRankAdds(w, counter, data, adds);
            assertEquals((long) w.localRanks().size() * adds, w.rank(0).readHeapLong(counter.offset()),
                    "RDMA atomics and the rank's own adds to one counter: every add counts");
        }
    }
}
