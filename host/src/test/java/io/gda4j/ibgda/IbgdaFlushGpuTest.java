package io.gda4j.ibgda;

import io.gda4j.transport.Transport;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.cuda.KernelArgs;
import io.gda4j.nic.NicConfig;
import io.gda4j.nic.emulated.EmulatedEngine;
import io.gda4j.nic.emulated.EmulatedNic;
import io.gda4j.nic.emulated.EmulatedNicConfig;
import io.gda4j.world.DeviceOps;
import io.gda4j.world.GpuWorlds;
import io.gda4j.world.HeapBuffer;
import io.gda4j.world.LocalWorld;
import io.gda4j.world.Rank;
import io.gda4j.world.Scope;
import io.gda4j.world.WorldConfig;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The PCIe flush on real GPUs, through the emulated NIC in its writes-pass-CQE mode (a READ's CQE is written before
 * its data lands): get then quiet reads the fetched bytes only because quiet flushes; with the flush off the same
 * kernel reads stale bytes (so a missing flush fails a test); and quiet flushes only after a get.
 */
@Tag("gpu")
@Timeout(120)
class IbgdaFlushGpuTest {
    static final long HEAP = 8L << 20;
    static final int ROUNDS = 20;

    static LocalWorld writesPassCqeWorld(String flush) {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
        System.setProperty(NicConfig.NIC_PROP_NAME, "emulated");
        System.setProperty(IbgdaConfig.FLUSH_PROP_NAME, flush);
        System.setProperty(EmulatedNicConfig.WRITES_PASS_CQE_PROP_NAME, "true");
        try {
            LocalWorld w = LocalWorld.create(WorldConfig.builder().gpus(GpuWorlds.gpus()).heapSizeBytes(HEAP)
                    .waitTimeout(Duration.ofSeconds(10)).transport(Transport.IBGDA.label()).build());
            w.loadModules("ibgda", "ops");
            return w;
        } finally {
            System.clearProperty(NicConfig.NIC_PROP_NAME);
            System.clearProperty(IbgdaConfig.FLUSH_PROP_NAME);
            System.clearProperty(EmulatedNicConfig.WRITES_PASS_CQE_PROP_NAME);
        }
    }

    /** Rounds in which rank 0's kernel read stale bytes right after get + quiet. */
    static int staleRounds(LocalWorld w) {
        HeapBuffer buf = w.heap().allocate(4096);
        Rank r0 = w.rank(0);
        Rank r1 = w.rank(1);
        int stale = 0;
        try (DeviceMemory out = r0.context().allocate(16)) {
            for (int round = 0; round < ROUNDS; round++) {
                byte fresh = (byte) (0x40 + round);
                // Without the flush the previous round's READ data may still be held: it lands after the engine's
                // hold on an idle QP, and would otherwise land on this round's buffer (the previous round's bytes).
                settle(TimeUnit.NANOSECONDS.toMillis(EmulatedEngine.WRITES_PASS_CQE_HOLD_NANOS) + 5);
                r0.fillHeap(buf.offset(), 8, (byte) 0x11);
                r1.fillHeap(buf.offset() + 64, 8, fresh);
                out.fill((byte) 0);
                r0.kernel("ibgda", "gda4j_ibgda_get_quiet_read").launch(1, 1, 0, r0.stream(), KernelArgs.create()
                        .pointer(r0.deviceView()).i32(1).i64(buf.offset()).i64(buf.offset() + 64)
                        .pointer(out.pointer()));
                r0.stream().synchronize();
                w.checkErrors();
                assertEquals(0, out.readLong(0), "status");
                long seen = out.readLong(8);
                long want = 0x0101010101010101L * (fresh & 0xff);
                if (seen != want) {
                    assertEquals(0x1111111111111111L, seen, "round " + round + ": neither the old nor the fetched bytes");
                    stale++;
                }
            }
        }
        return stale;
    }

    @Test
    void quietFlushesSoAGetIsVisibleWhereWritesMayPassTheirCqe() {
        try (LocalWorld w = writesPassCqeWorld("auto")) {
            assertTrue(IbgdaTransport.flushesOnQuiet(w.rank(0)), IbgdaTransport.describeFetchedValues(w.rank(0)));
            assertEquals(0, staleRounds(w), "quiet returned before the fetched bytes were visible: "
                    + IbgdaTransport.describeFetchedValues(w.rank(0)));
        }
    }

    @Test
    void withoutTheFlushAGetIsStaleAfterQuiet() {
        try (LocalWorld w = writesPassCqeWorld("never")) {
            assertFalse(IbgdaTransport.flushesOnQuiet(w.rank(0)));
            assertTrue(IbgdaTransport.describeFetchedValues(w.rank(0)).contains("scratch"),
                    "no flush, so no null MR: " + IbgdaTransport.describeFetchedValues(w.rank(0)));
            int stale = staleRounds(w);
            assertTrue(stale > 0, "the emulated NIC delivered every READ's data before its CQE: its writes-pass-CQE"
                    + " mode does not exercise the flush");
        }
    }

    private static void settle(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The engine counts a batch after writing its CQEs, which the kernel may already have seen: let it finish. */
    static long settledWqes(EmulatedNic nic) {
        try {
            Thread.sleep(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return nic.stats().wqes();
    }

    @Test
    void quietFlushesOnlyAfterAGet() {
        try (LocalWorld w = writesPassCqeWorld("auto")) {
            EmulatedNic nic = (EmulatedNic) IbgdaTransport.nicOf(w.rank(0)).orElseThrow();
            HeapBuffer buf = w.heap().allocate(4096);
            DeviceOps ops = new DeviceOps(w);
            ops.put(0, 1, buf.offset(), buf.offset(), 64, Scope.THREAD); // ends with flush(peer): drain, no get
            long before = settledWqes(nic);
            ops.put(0, 1, buf.offset(), buf.offset(), 64, Scope.THREAD);
            assertEquals(1, settledWqes(nic) - before, "a put and its quiet: one WRITE, no flush atomic");
            staleRounds(w);
            before = settledWqes(nic);
            ops.put(0, 1, buf.offset(), buf.offset(), 64, Scope.THREAD);
            assertEquals(1, settledWqes(nic) - before, "the gets before were flushed already");
        }
    }
}
