package io.gda4j.nic.emulated;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Pointer;

import io.gda4j.mlx5.CqeDecoder;
import io.gda4j.mlx5.DecodedCqe;
import io.gda4j.mlx5.DoorbellDescriptor;
import io.gda4j.mlx5.DoorbellRecordDescriptor;
import io.gda4j.mlx5.Mlx5Opcode;
import io.gda4j.mlx5.WqeDecoder;
import io.gda4j.mlx5.WqeDescriptor;
import io.gda4j.mlx5.WqeEncoder;
import io.gda4j.mlx5.WqeFields;
import io.gda4j.nic.HostPoster;
import io.gda4j.nic.MemoryKind;
import io.gda4j.nic.MemoryRegistration;
import io.gda4j.nic.NicAccess;
import io.gda4j.nic.NicMemory;
import io.gda4j.nic.QpPair;
import io.gda4j.nic.QpRings;
import io.gda4j.nic.QpSpec;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Properties;
import java.util.Map;
import java.util.concurrent.TimeoutException;

/**
 * The emulated NIC's strict mode (no more lenient than a ConnectX) on host memory, and the host poster's answers to
 * it: a WQE without the fence bit runs before an earlier RDMA READ's data has landed (so a WRITE from the buffer the
 * READ fills sends stale bytes), the fence bit makes it wait, CQEs stay in posting order either way; the host poster
 * sets the fence bit after a READ or an atomic, and refuses inline payloads above the QP's limit.
 */
class EmulatedNicStrictTest extends TwoHeapNicTest {
    static final int BYTES = 64;


    void open(boolean strict) {
        open(new EmulatedNicConfig("backoff", false, strict));
    }

    QpPair pair() {
        return pair(64);
    }

    static void fill(long address, byte value) {
        byte[] b = new byte[BYTES];
        Arrays.fill(b, value);
        new Pointer(address).write(0, b, 0, b.length);
    }

    static byte[] read(long address) {
        return new Pointer(address).getByteArray(0, BYTES);
    }

    static byte[] filled(byte value) {
        byte[] b = new byte[BYTES];
        Arrays.fill(b, value);
        return b;
    }

    /**
     * get(buf) then put(from buf), as raw WQEs with or without the fence bit on the WRITE, rung together: the READ
     * fetches B[0..64) (new bytes 0x22) into A[0..64) (old bytes 0x11), the WRITE sends A[0..64) to B[1024..).
     * Returns what arrived at B[1024..).
     */
    byte[] readThenWrite(boolean fenceBit) {
        try (QpPair qps = pair()) {
            fill(heapA, (byte) 0x11);
            fill(heapB, (byte) 0x22);
            QpRings r = qps.first().hostRings();
            ByteBuffer sq = new Pointer(r.sqBuf()).getByteBuffer(0, (long) r.sqWqebbs() * WqeDescriptor.WQEBB_SIZE);
            WqeEncoder.writeRdmaRead(sq, 0, r.qpn(), WqeDescriptor.FM_CE_SE_CQ_UPDATE, heapB, memB.rkey(), heapA,
                    memA.lkey(), BYTES);
            WqeEncoder.writeRdmaWrite(sq, 1, r.qpn(), WqeDescriptor.FM_CE_SE_CQ_UPDATE
                            | (fenceBit ? WqeDescriptor.FM_CE_SE_FENCE : 0), heapB + 1024, memB.rkey(), heapA,
                    memA.lkey(), BYTES);
            DoorbellRecordDescriptor.putSendCounterRelease(new Pointer(r.dbrec()).getByteBuffer(0, 8), 0, 2);
            DoorbellDescriptor.putDoorbellRelease(new Pointer(r.doorbell()).getByteBuffer(0, 8), 0, 2, r.qpn());
            ByteBuffer cq = new Pointer(r.cqBuf()).getByteBuffer(0, r.cqeCount() * 64L);
            long deadline = System.nanoTime() + TIMEOUT;
            while (CqeDecoder.poll(cq, 1) == CqeDecoder.EMPTY && System.nanoTime() < deadline) {
                nic.engine().doWork();
            }
            DecodedCqe first = CqeDecoder.decode(cq, 0);
            DecodedCqe second = CqeDecoder.decode(cq, 1);
            assertEquals(0, first.wqeCounter(), "CQEs in posting order: the READ's first " + first);
            assertEquals(Mlx5Opcode.RDMA_READ, first.wqeOpcode(), first.toString());
            assertEquals(1, second.wqeCounter(), "then the WRITE's " + second);
            first.requireSuccess();
            second.requireSuccess();
            assertArrayEquals(filled((byte) 0x22), read(heapA), "the READ's data landed by its CQE");
            return read(heapB + 1024);
        }
    }

    @Test
    void strictNicRunsAnUnfencedWriteBeforeAnEarlierReadHasLanded() {
        open(true);
        assertArrayEquals(filled((byte) 0x11), readThenWrite(false),
                "strict emulated NIC: a WRITE without the fence bit must be able to read its source before an earlier"
                        + " READ's data landed (a ConnectX may), so it sends the old bytes");
    }

    @Test
    void fenceBitMakesTheWriteWaitForTheRead() {
        open(true);
        assertArrayEquals(filled((byte) 0x22), readThenWrite(true),
                "with the fence bit the WRITE runs after the READ's data landed and sends the fetched bytes");
    }

    @Test
    void lenientNicRunsEverythingInPostingOrder() {
        open(false);
        assertArrayEquals(filled((byte) 0x22), readThenWrite(false));
    }

    @Test
    void aParkedReadLandsOnAnIdleQp() throws TimeoutException {
        open(true);
        try (QpPair qps = pair()) {
            fill(heapB, (byte) 0x5a);
            HostPoster p = qps.first().hostPoster();
            p.postRead(heapB, memB.rkey(), heapA, memA.lkey(), BYTES, TIMEOUT);
            complete(p);
            assertArrayEquals(filled((byte) 0x5a), read(heapA));
        }
    }

    @Test
    void hostPosterFencesTheWqeAfterAReadSoItsWriteSendsTheFetchedBytes() throws TimeoutException {
        open(true);
        try (QpPair qps = pair()) {
            fill(heapA, (byte) 0x11);
            fill(heapB, (byte) 0x22);
            HostPoster p = qps.first().hostPoster();
            p.postRead(heapB, memB.rkey(), heapA, memA.lkey(), BYTES, TIMEOUT);
            long write = p.postWrite(heapB + 1024, memB.rkey(), heapA, memA.lkey(), BYTES, TIMEOUT);
            QpRings r = qps.first().hostRings();
            WqeFields f = new WqeFields();
            WqeDecoder.decodeInto(new Pointer(r.sqBuf()).getByteBuffer(0, (long) r.sqWqebbs() * 64), write, r.qpn(), f);
            assertEquals(WqeDescriptor.FM_CE_SE_FENCE, f.fmCeSe() & WqeDescriptor.FM_CE_SE_FENCE,
                    "the WRITE after an outstanding READ carries the fence bit");
            p.ring();
            while (p.retiredIndex() < p.producerIndex()) {
                nic.engine().doWork();
                p.poll();
            }
            assertArrayEquals(filled((byte) 0x22), read(heapB + 1024), "the WRITE sent the bytes the READ fetched");
            long after = p.postWrite(heapB + 2048, memB.rkey(), heapA, memA.lkey(), BYTES, TIMEOUT);
            WqeDecoder.decodeInto(new Pointer(r.sqBuf()).getByteBuffer(0, (long) r.sqWqebbs() * 64), after, r.qpn(), f);
            assertEquals(0, f.fmCeSe() & WqeDescriptor.FM_CE_SE_FENCE, "no fence once the READ has completed");
            p.ring();
            while (p.retiredIndex() < p.producerIndex()) {
                nic.engine().doWork();
                p.poll();
            }
        }
    }

    @Test
    void hostPosterRefusesAnInlinePayloadAboveTheQpLimit() throws TimeoutException {
        open(true);
        try (QpPair qps = nic.createConnectedPair(new QpSpec(null, 64, 64, 12, "a->b"),
                new QpSpec(null, 64, 64, 12, "b->a"))) {
            HostPoster p = qps.first().hostPoster();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> p.postWriteInline(heapB, memB.rkey(), new byte[16], TIMEOUT));
            assertTrue(e.getMessage().contains("max_inline of 12"), e.getMessage());
            assertEquals(0, p.producerIndex(), "nothing was posted");
            byte[] twelve = new byte[12];
            Arrays.fill(twelve, (byte) 7);
            p.postWriteInline(heapB, memB.rkey(), twelve, TIMEOUT);
            p.ring();
            while (p.retiredIndex() < p.producerIndex()) {
                nic.engine().doWork();
                p.poll();
            }
            assertArrayEquals(twelve, new Pointer(heapB).getByteArray(0, 12), "a payload at the limit is sent");
        }
    }

    @Test
    void strictIsTheDefaultAndConfigurable() {
        assertTrue(EmulatedNicConfig.resolve(new Properties(), Map.of()).strict());
        Properties off = new Properties();
        off.setProperty(EmulatedNicConfig.STRICT_PROP_NAME, "false");
        assertEquals(false, EmulatedNicConfig.resolve(off, Map.of()).strict());
        assertEquals(false, EmulatedNicConfig.resolve(new Properties(),
                Map.of(EmulatedNicConfig.STRICT_ENV, "false")).strict());
        Properties bad = new Properties();
        bad.setProperty(EmulatedNicConfig.STRICT_PROP_NAME, "maybe");
        assertThrows(IllegalArgumentException.class, () -> EmulatedNicConfig.resolve(bad, Map.of()));
    }
}
