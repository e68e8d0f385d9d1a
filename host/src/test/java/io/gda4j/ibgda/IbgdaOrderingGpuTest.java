package io.gda4j.ibgda;

import io.gda4j.transport.Transport;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.cuda.KernelArgs;
import io.gda4j.nic.NicConfig;
import io.gda4j.world.DeviceErrorException;
import io.gda4j.world.DeviceOps;
import io.gda4j.world.ErrorRecord;
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
import java.util.Arrays;
import java.util.List;

/**
 * Ordering and failure rules of issue 8 on real GPUs: the inline slot under a sender that never waits (p2p and the
 * emulated NIC), get then put ordered by the fence bit on the strict emulated NIC, and a failed reservation that
 * must not wedge the QP.
 */
@Tag("gpu")
@Timeout(120)
class IbgdaOrderingGpuTest {
    static final long HEAP = 8L << 20;

    static LocalWorld p2pWorld() {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
        List<Integer> gpus = GpuWorlds.gpus(2, false);
        return LocalWorld.create(WorldConfig.builder().gpus(gpus).heapSizeBytes(HEAP)
                .waitTimeout(Duration.ofSeconds(20)).transport("p2p").build());
    }

    /**
     * Rank 0 sends messages 1..count to rank 1's slot with put_inline back to back; rank 1's reader, launched first,
     * waits for each next sequence and checks that every value it gets was sent whole (hi = lo * mix, lo = the
     * sequence the slot carried). Before the fix wait_inline accepted {low half of n+1, high half of n}.
     */
    static void inlineSlotNeverReturnsHalvesOfTwoMessages(LocalWorld w, int count) {
        Rank sender = w.rank(0);
        Rank reader = w.rank(1);
        HeapBuffer slot = w.heap().allocateSignals(2);
        try (DeviceMemory out = reader.context().allocate(64); DeviceMemory status = sender.context().allocate(16)) {
            out.fill((byte) 0);
            status.fill((byte) 0);
            reader.kernel("ops", "gda4j_op_inline_stream_check").launch(1, 1, 0, reader.stream(), KernelArgs.create()
                    .pointer(reader.deviceView()).i64(slot.offset()).u32(count).pointer(out.pointer())
                    .pointer(out.pointer().plusBytes(32)));
            sender.kernel("ops", "gda4j_op_inline_stream_send").launch(1, 1, 0, sender.stream(), KernelArgs.create()
                    .pointer(sender.deviceView()).i32(1).i64(slot.offset()).u32(count).pointer(status.pointer()));
            sender.stream().synchronize();
            reader.stream().synchronize();
            w.checkErrors();
            assertEquals(0, (int) status.readLong(0), "sender status");
            assertEquals(0, (int) out.readLong(32), "reader status");
            long received = out.readLong(0);
            long torn = out.readLong(8);
            assertEquals(0, torn, String.format("%s: %d of %d values wait_inline returned were not sent whole; the"
                            + " first: 0x%016x with sequence %d (halves of two messages)", w.transport(0, 1), torn,
                    received, out.readLong(16), out.readLong(24)));
            assertTrue(received >= 2, "the reader saw only " + received + " message(s): it did not overlap the"
                    + " sender, so the test proved nothing; rerun");
        }
    }

    @Test
    void p2pInlineSlotUnderASenderThatDoesNotWait() {
        try (LocalWorld w = p2pWorld()) {
            assertEquals(Transport.P2P, w.transport(0, 1));
            inlineSlotNeverReturnsHalvesOfTwoMessages(w, 1 << 20);
        }
    }

    @Test
    void ibgdaInlineSlotUnderASenderThatDoesNotWait() {
        try (LocalWorld w = IbgdaGpuTest.ibgdaWorld("auto")) {
            assertEquals(Transport.IBGDA, w.transport(0, 1));
            inlineSlotNeverReturnsHalvesOfTwoMessages(w, 20_000);
        }
    }

    @Test
    void getThenPutSendsTheFetchedBytes() {
        try (LocalWorld w = IbgdaGpuTest.ibgdaWorld("auto")) {
            getThenPutSendsTheFetchedBytes(w);
        }
    }

    /**
     * Rank 0 gets 4 KiB from rank 1, then puts its copy back to rank 1, in one kernel, 20 rounds of fresh bytes: the
     * put must carry the fetched bytes (its WQE waits for the READ through the fence bit). Shared with the mlx5 test.
     */
    static void getThenPutSendsTheFetchedBytes(LocalWorld w) {
        int bytes = 4096;
        HeapBuffer buf = w.heap().allocate(3L * bytes);
        Rank r0 = w.rank(0);
        Rank r1 = w.rank(1);
        for (int round = 0; round < 20; round++) {
            byte fresh = (byte) (0x40 + round);
            r0.fillHeap(buf.offset(), bytes, (byte) 0x11); // rank 0's buffer before the get: stale
            r1.fillHeap(buf.offset() + bytes, bytes, fresh); // what the get fetches
            r1.fillHeap(buf.offset() + 2L * bytes, bytes, (byte) 0);
            try (DeviceMemory status = r0.context().allocate(16)) {
                status.fill((byte) 0);
                r0.kernel("ibgda", "gda4j_ibgda_get_then_put").launch(1, 1, 0, r0.stream(), KernelArgs.create()
                        .pointer(r0.deviceView()).i32(1).i64(buf.offset()).i64(buf.offset() + bytes).i64(bytes)
                        .i64(buf.offset() + 2L * bytes).pointer(status.pointer()));
                r0.stream().synchronize();
                w.checkErrors();
                assertEquals(0, (int) status.readLong(0), "status");
            }
            byte[] want = new byte[bytes];
            Arrays.fill(want, fresh);
            byte[] got = new byte[bytes];
            r1.readHeap(buf.offset() + 2L * bytes, got);
            assertArrayEquals(want, got, "round " + round + ": the put after get sent " + String.format("0x%02x",
                    got[0]) + "; 0x11 means it read its source before the READ's data landed (no fence bit on"
                    + " its WQE; the strict emulated NIC lets an unfenced WQE overtake a READ)");
        }
    }

    @Test
    void aFailedReservationFailsLaterPostsAtOnceNamingTheFirstFailure() {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
        List<Integer> gpus = GpuWorlds.gpus(2, false);
        Duration timeout = Duration.ofSeconds(4);
        System.setProperty(NicConfig.NIC_PROP_NAME, "emulated");
        LocalWorld w;
        try {
            w = LocalWorld.create(WorldConfig.builder().gpus(gpus).heapSizeBytes(HEAP).waitTimeout(timeout)
                    .transport(Transport.IBGDA.label()).build());
        } finally {
            System.clearProperty(NicConfig.NIC_PROP_NAME);
        }
        try (w) {
            HeapBuffer buf = w.heap().allocate(4096);
            Rank r0 = w.rank(0);
            try (DeviceMemory status = r0.context().allocate(16)) {
                status.fill((byte) 0);
                // More WQEBBs than the send queue holds: SQ_FULL after the timeout, with its slots reserved.
                r0.kernel("ibgda", "gda4j_ibgda_fail_reservation").launch(1, 1, 0, r0.stream(), KernelArgs.create()
                        .pointer(r0.deviceView()).i32(1).pointer(status.pointer()));
                r0.stream().synchronize();
                assertEquals(-1, (int) status.readLong(0), "the impossible reservation times out (ERR_TIMEOUT)");
                assertEquals(IbgdaErrorDecoder.SQ_FULL, r0.readErrorRecord().code());
            }
            w.clearErrors();
            DeviceOps ops = new DeviceOps(w);
            long start = System.nanoTime();
            DeviceErrorException e = assertThrows(DeviceErrorException.class,
                    () -> ops.put(0, 1, buf.offset(), buf.offset(), 64, Scope.THREAD));
            long elapsedMillis = (System.nanoTime() - start) / 1_000_000;
            ErrorRecord record = e.record();
            assertEquals(IbgdaErrorDecoder.SQ_FULL, record == null ? null : record.code(),
                    "the later put names the QP's first failure: " + e.getMessage());
            assertTrue(e.getMessage().contains("failed earlier"), e.getMessage());
            assertTrue(elapsedMillis < timeout.toMillis() / 2, "the later put failed after " + elapsedMillis
                    + " ms: it waited behind the hole the failed reservation left instead of failing at once");
        }
    }
}
