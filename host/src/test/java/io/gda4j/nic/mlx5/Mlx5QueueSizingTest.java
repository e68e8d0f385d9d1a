package io.gda4j.nic.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.gda4j.nic.QpSpec;
import io.gda4j.nic.mlx5.Mlx5QueueSizing.Attempt;

import org.junit.jupiter.api.Test;

/** libmlx5's queue arithmetic (mlx5_calc_send_wqe, mlx5_calc_sq_size, mlx5_create_cq), mirrored and corrected. */
class Mlx5QueueSizingTest {
    @Test
    void wqeSizeFollowsMlx5CalcSendWqe() {
        // 192 overhead + one 16-byte SGE = 208 -> 256; inline 256: 192 + align(4 + 256, 16) = 464 -> 512.
        assertEquals(256, Mlx5QueueSizing.sendWqeBytes(0));
        assertEquals(256, Mlx5QueueSizing.sendWqeBytes(12));
        assertEquals(512, Mlx5QueueSizing.sendWqeBytes(QpSpec.DEFAULT_MAX_INLINE_BYTES));
        assertEquals(512, Mlx5QueueSizing.sendWqeBytes(316));
        assertEquals(576, Mlx5QueueSizing.sendWqeBytes(317));
        assertEquals(1024, Mlx5QueueSizing.sendWqeBytes(828));
    }

    @Test
    void inlineLimitsOfEachDescriptorSize() {
        assertEquals(828, Mlx5QueueSizing.maxInlineFor(1024));
        assertEquals(316, Mlx5QueueSizing.maxInlineFor(512));
        assertEquals(60, Mlx5QueueSizing.maxInlineFor(256));
        for (int d : Mlx5QueueSizing.DESCRIPTOR_SIZES) {
            assertEquals(d, Mlx5QueueSizing.sendWqeBytes(Mlx5QueueSizing.maxInlineFor(d)), "descriptor " + d);
        }
    }

    @Test
    void asksForFewerWorkRequestsSoTheSendQueueIsExactlyTheSpec() {
        // 1024 WQEBBs with 512-byte WQEs: 128 WRs -> 65536 bytes -> 1024 WQEBBs (asking for 1024 WRs gives 8192).
        Attempt a = Mlx5QueueSizing.first(1024, 1024, 256);
        assertEquals(128, a.maxSendWr());
        assertEquals(1024, Mlx5QueueSizing.predictedWqebbs(a.maxSendWr(), 512));
        assertEquals(8192, Mlx5QueueSizing.predictedWqebbs(1024, 512));
        assertEquals(1024, a.cqEntries());
        // 5-WQEBB WQEs (320 bytes) do not divide: 204 WRs * 320 = 65280 -> 65536.
        assertEquals(204, (int) (1024L * 64 / 320));
        assertEquals(1024, Mlx5QueueSizing.predictedWqebbs(204, 320));
    }

    @Test
    void aSendQueueSmallerThanOneWqeStillGetsOne() {
        Attempt a = Mlx5QueueSizing.first(4, 4, 256);
        assertEquals(1, a.maxSendWr());
        assertEquals(8, Mlx5QueueSizing.predictedWqebbs(1, 512));
        assertEquals(8, a.cqEntries(), "the CQ follows the predicted send queue");
    }

    @Test
    void cqRequestGivesExactlyAPowerOfTwo() {
        // mlx5_create_cq: ncqe = roundup_pow_of_two(cqe + 1)
        for (int n : new int[] {2, 64, 1024, 1 << 16}) {
            assertEquals(n, Mlx5QueueSizing.roundUpPowerOfTwo(Mlx5QueueSizing.cqRequest(n) + 1L));
        }
        assertEquals(1, Mlx5QueueSizing.cqRequest(1), "cqe 0 is EINVAL; 1 gives 2 entries");
    }

    @Test
    void correctsAWrongGuessFromWhatWasGranted() {
        Attempt tried = new Attempt(128, 1024);
        assertNull(Mlx5QueueSizing.next(tried, 1024, 1024, 1024, 1024), "exact fit");
        assertNull(Mlx5QueueSizing.next(tried, 1024, 1024, 1024, 2048), "a larger CQ is fine");
        // the real overhead was smaller than assumed: half the WQEBBs -> twice the WRs
        assertEquals(new Attempt(256, 1024), Mlx5QueueSizing.next(tried, 1024, 1024, 512, 1024));
        // larger than assumed: the send queue is fine but the CQ must grow to it
        assertEquals(new Attempt(128, 2048), Mlx5QueueSizing.next(tried, 1024, 1024, 2048, 1024));
    }
}
