package io.gda4j.nic.emulated;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.sun.jna.Pointer;

import io.gda4j.mlx5.DecodedWqe;
import io.gda4j.mlx5.Mlx5Opcode;
import io.gda4j.mlx5.WqeDecoder;
import io.gda4j.mlx5.WqeDescriptor;
import io.gda4j.nic.HostPoster;
import io.gda4j.nic.RingPoster;
import io.gda4j.nic.QpPair;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Inline WQEs that take two WQEBBs, counted as two everywhere: when the host poster reserves ring space, when the
 * engine steps to the next WQE in one doorbell's batch, and when CQEs retire slots. Every inline WQE the device API
 * posts takes one WQEBB, so code that went back to "an inline WQE is one WQEBB" would pass the other tests.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InlineWqebbAccountingTest extends TwoHeapNicTest {
    static final long TIMEOUT = TimeUnit.SECONDS.toNanos(10);
    /** 40 bytes: ctrl + raddr + 4-byte header + 40 bytes = 5 segments of 16 bytes, two WQEBBs. */
    static final int TWO_WQEBB_PAYLOAD = 40;

    @BeforeEach
    void open() {
        open(new EmulatedNicConfig("backoff", false));
    }

    static byte[] pattern(int length, int seed) {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        return b;
    }

    static byte[] read(long address, int length) {
        return new Pointer(address).getByteArray(0, length);
    }

    void runEngineUntilRetired(HostPoster p) throws TimeoutException {
        p.ring();
        for (int i = 0; i < 10_000 && p.retiredIndex() < p.producerIndex(); i++) {
            nic.engine().doWork();
            p.poll();
        }
        p.quiet(TIMEOUT);
    }

    @Test
    void thePayloadTakesTwoWqebbs() {
        assertEquals(2, WqeDescriptor.wqebbsForDs(WqeDescriptor.inlineDs(TWO_WQEBB_PAYLOAD)));
    }

    @Test
    void aTwoWqebbInlineWaitsForTwoFreeSlotsAndNeverOverwritesAnUnfinishedWqe() throws TimeoutException {
        try (QpPair qps = pair(8)) {
            RingPoster p = new RingPoster(qps.first());
            ByteBuffer sq = new Pointer(qps.first().hostRings().sqBuf()).getByteBuffer(0, 8L * 64);
            long nop = p.postNop(TIMEOUT);
            for (int i = 0; i < 3; i++) {
                p.postWriteInline(heapB + 64L * i, memB.rkey(), pattern(TWO_WQEBB_PAYLOAD, i), TIMEOUT);
            }
            assertEquals(7, p.producerIndex(), "1 NOP + 3 inline WQEs of 2 WQEBBs");
            // One slot is free and the engine does not run: the next inline WQE needs two, so it must wait, not
            // write its second WQEBB over the NOP in slot 0, which has not completed.
            byte[] last = pattern(TWO_WQEBB_PAYLOAD, 3);
            TimeoutException e = assertThrows(TimeoutException.class,
                    () -> p.postWriteInline(heapB + 192, memB.rkey(), last, TimeUnit.MILLISECONDS.toNanos(200)));
            assertEquals(7, p.producerIndex(), e.getMessage());
            DecodedWqe slot0 = WqeDecoder.decode(sq, nop, qps.first().qpn());
            assertEquals(Mlx5Opcode.NOP, slot0.opcode(), "slot 0 was overwritten before its WQE completed");

            runEngineUntilRetired(p);
            assertEquals(7, p.retiredIndex(), "CQEs retire 1 + 3 x 2 WQEBBs");
            // Now slots 7 and 0 are free: the WQE wraps the ring.
            long wrapped = p.postWriteInline(heapB + 192, memB.rkey(), last, TIMEOUT);
            assertEquals(7, wrapped);
            assertEquals(9, p.producerIndex());
            runEngineUntilRetired(p);
            assertEquals(9, p.retiredIndex());
            for (int i = 0; i < 4; i++) {
                assertArrayEquals(pattern(TWO_WQEBB_PAYLOAD, i), read(heapB + 64L * i, TWO_WQEBB_PAYLOAD),
                        "inline WRITE " + i);
            }
        }
    }

    @Test
    void oneDoorbellOverTwoWqebbInlinesAndAWriteRunsEachWqeOnce() throws TimeoutException {
        try (QpPair qps = pair(8)) {
            RingPoster p = new RingPoster(qps.first());
            byte[] source = pattern(100, 9);
            new Pointer(heapA).write(0, source, 0, source.length);
            p.postNop(TIMEOUT);
            runEngineUntilRetired(p);
            for (int lap = 0; lap < 5; lap++) { // 5 laps of 7 WQEBBs over a ring of 8: every slot boundary
                byte[] first = pattern(TWO_WQEBB_PAYLOAD, 10 + lap);
                byte[] second = pattern(TWO_WQEBB_PAYLOAD + 20, 20 + lap); // 60 bytes: still two WQEBBs
                p.postWriteInline(heapB, memB.rkey(), first, TIMEOUT);
                p.postWriteInline(heapB + 256, memB.rkey(), second, TIMEOUT);
                p.postWrite(heapB + 512, memB.rkey(), heapA, memA.lkey(), source.length, TIMEOUT);
                p.postWriteInline(heapB + 1024, memB.rkey(), first, TIMEOUT);
                long before = p.producerIndex();
                runEngineUntilRetired(p); // one doorbell for 2 + 2 + 1 + 2 WQEBBs
                assertEquals(before, p.retiredIndex(), "lap " + lap);
                assertArrayEquals(first, read(heapB, first.length), "lap " + lap + ": first inline");
                assertArrayEquals(second, read(heapB + 256, second.length), "lap " + lap + ": second inline");
                assertArrayEquals(source, read(heapB + 512, source.length), "lap " + lap + ": the WRITE after them");
                assertArrayEquals(first, read(heapB + 1024, first.length), "lap " + lap + ": last inline");
            }
        }
    }
}
