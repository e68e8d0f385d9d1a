package io.gda4j.nic.emulated;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Pointer;

import io.gda4j.nic.HostPoster;
import io.gda4j.nic.MemoryKind;
import io.gda4j.nic.MemoryRegistration;
import io.gda4j.nic.NicAccess;
import io.gda4j.nic.NicMemory;
import io.gda4j.nic.NicQp;
import io.gda4j.nic.QpPair;
import io.gda4j.nic.QpSpec;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The emulated NIC's writes-pass-CQE mode, which makes the PCIe flush necessary: an RDMA READ completes (its CQE is
 * consumed) before its data has landed, and the data lands at the flush (an ATOMIC_FA on a loopback QP, fetched
 * value dropped), at a WRITE that reads local memory, or after the hold time on an idle QP. In the default mode the
 * data is there by the CQE. Strict and lenient READ execution both.
 */
class EmulatedNicFlushTest extends TwoHeapNicTest {
    static final int BYTES = 64;


    void open(boolean strict, boolean writesPassCqe) {
        open(new EmulatedNicConfig("backoff", false, strict, writesPassCqe));
    }

    static void fill(long address, byte value) {
        byte[] b = new byte[BYTES];
        Arrays.fill(b, value);
        new Pointer(address).write(0, b, 0, b.length);
    }

    static byte[] filled(byte value) {
        byte[] b = new byte[BYTES];
        Arrays.fill(b, value);
        return b;
    }

    byte[] fetched() {
        return new Pointer(heapA).getByteArray(0, BYTES);
    }

    /** READ B[0..64) (0x22) into A[0..64) (0x11) and consume its CQE; returns the poster. */
    HostPoster readAndConsumeTheCqe(QpPair qps) throws TimeoutException {
        fill(heapA, (byte) 0x11);
        fill(heapB, (byte) 0x22);
        HostPoster p = qps.first().hostPoster();
        p.postRead(heapB, memB.rkey(), heapA, memA.lkey(), BYTES, TIMEOUT);
        complete(p);
        return p;
    }

    void flush(NicQp loopback) throws TimeoutException {
        HostPoster f = loopback.hostPoster();
        f.postFetchAdd(heapA + 1024, memA.rkey(), 1, 0, nic.nullMemory().lkey(), TIMEOUT);
        complete(f);
    }

    QpPair pair() {
        return nic.createConnectedPair(QpSpec.of(null, 64, "a->b"), QpSpec.of(null, 64, "b->a"));
    }

    @Test
    void byDefaultTheReadsDataIsThereByItsCqe() throws TimeoutException {
        open(true, false);
        assertEquals(false, nic.capabilities().writesMayPassCqe());
        try (QpPair qps = pair()) {
            readAndConsumeTheCqe(qps);
            assertArrayEquals(filled((byte) 0x22), fetched());
        }
    }

    @Test
    void writesPassCqeDeliversTheCqeBeforeTheDataAndTheFlushLandsIt() throws TimeoutException {
        for (boolean strict : new boolean[] {true, false}) {
            open(strict, true);
            assertTrue(nic.capabilities().writesMayPassCqe(), "the NIC says so, so quiet flushes (IbgdaSession)");
            NicQp loopback = nic.createLoopbackQp(QpSpec.of(null, 16, "flush"));
            try (QpPair qps = pair()) {
                readAndConsumeTheCqe(qps);
                assertArrayEquals(filled((byte) 0x11), fetched(), (strict ? "strict" : "lenient")
                        + ": the READ's CQE was consumed before its data landed; without a flush the bytes are stale");
                flush(loopback);
                assertArrayEquals(filled((byte) 0x22), fetched(), "the flush's atomic lands the READ's data first");
            } finally {
                loopback.close();
                nic.close();
                nic = null;
            }
        }
    }

    @Test
    void heldDataLandsOnAnIdleQpAfterTheHoldTime() throws Exception {
        open(false, true);
        try (QpPair qps = pair()) {
            readAndConsumeTheCqe(qps);
            assertArrayEquals(filled((byte) 0x11), fetched());
            Thread.sleep(TimeUnit.NANOSECONDS.toMillis(EmulatedEngine.WRITES_PASS_CQE_HOLD_NANOS) + 5);
            nic.engine().doWork();
            assertArrayEquals(filled((byte) 0x22), fetched());
        }
    }

    @Test
    void aWriteThatReadsLocalMemoryLandsHeldDataFirst() throws TimeoutException {
        open(false, true);
        try (QpPair qps = pair()) {
            NicQp loopback = nic.createLoopbackQp(QpSpec.of(null, 16, "flush"));
            HostPoster p = readAndConsumeTheCqe(qps);
            p.postWrite(heapB + 1024, memB.rkey(), heapA, memA.lkey(), BYTES, TIMEOUT);
            complete(p);
            flush(loopback); // the WRITE's own data lands after its CQE in this mode
            assertArrayEquals(filled((byte) 0x22), new Pointer(heapB + 1024).getByteArray(0, BYTES),
                    "a DMA read of local memory does not pass the posted writes before it");
            loopback.close();
        }
    }

    @Test
    void writesPassCqeIsConfigurable() {
        assertEquals(false, EmulatedNicConfig.resolve(new Properties(), Map.of()).writesPassCqe());
        Properties on = new Properties();
        on.setProperty(EmulatedNicConfig.WRITES_PASS_CQE_PROP_NAME, "true");
        assertTrue(EmulatedNicConfig.resolve(on, Map.of()).writesPassCqe());
        assertTrue(EmulatedNicConfig.resolve(new Properties(),
                Map.of(EmulatedNicConfig.WRITES_PASS_CQE_ENV, "true")).writesPassCqe());
    }
}
