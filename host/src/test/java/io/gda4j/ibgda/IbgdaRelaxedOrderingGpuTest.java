package io.gda4j.ibgda;

import io.gda4j.transport.Transport;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.DevicePointer;
import io.gda4j.cuda.RequiresCuda;
import io.gda4j.world.DeviceErrorException;
import io.gda4j.world.DeviceOps;
import io.gda4j.world.ErrorRecord;
import io.gda4j.world.ErrorRecordDescriptor;
import io.gda4j.world.HeapBuffer;
import io.gda4j.world.LocalWorld;
import io.gda4j.world.Rank;
import io.gda4j.world.Scope;
import io.gda4j.world.SignalOp;

import jcuda.driver.JCudaDriver;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.Arrays;
import java.util.Locale;

/**
 * A SET signal on a QP whose NIC writes with relaxed ordering is refused on the GPU, before anything is reserved:
 * an 8-byte inline WRITE could land before the data it guards. ADD (an RDMA atomic) still goes through, and a QP
 * without the flag still takes SET. The emulated NIC never reports relaxed ordering, so the test sets the flag in
 * rank 0's DeviceQp toward rank 1, as the host does for a NIC registered with relaxed ordering
 * ({@code IbgdaConfigTest} checks that part without a GPU).
 */
@RequiresCuda
@Tag("gpu")
@Timeout(120)
class IbgdaRelaxedOrderingGpuTest {
    static final int BYTES = 4096;
    static LocalWorld world;
    static DeviceOps ops;
    static HeapBuffer data;
    static HeapBuffer signals;
    static int qpn;

    /** The GPU address of {@code rank}'s DeviceQp toward {@code peer}: the peer entry's handle. */
    static long deviceQp(Rank rank, int peer) {
        return rank.link(peer).handle();
    }

    static long readWord(Rank rank, long address) {
        return rank.context().readLong(DevicePointer.of(address));
    }

    @BeforeAll
    static void setUp() {
        world = IbgdaGpuTest.ibgdaWorld("auto");
        ops = new DeviceOps(world);
        data = world.heap().allocate(2L * BYTES);
        signals = world.heap().allocateSignals(4);
        assertEquals(Transport.IBGDA, world.transport(0, 1));
        Rank r0 = world.rank(0);
        long qp = deviceQp(r0, 1);
        // qpn (u32 @56) and flags (u32 @60) are one little-endian 8-byte word
        long word = readWord(r0, qp + DeviceQpDescriptor.QPN_OFFSET);
        qpn = (int) word;
        int flags = (int) (word >>> 32);
        assertEquals(0, flags & DeviceQpDescriptor.FLAG_RELAXED_ORDERING, "the emulated NIC has no relaxed ordering");
        r0.context().makeCurrent();
        Cuda.check(JCudaDriver.cuMemsetD32(DevicePointer.of(qp + DeviceQpDescriptor.FLAGS_OFFSET),
                flags | DeviceQpDescriptor.FLAG_RELAXED_ORDERING, 1), "cuMemsetD32(DeviceQp flags)");
        assertEquals(flags | DeviceQpDescriptor.FLAG_RELAXED_ORDERING,
                (int) (readWord(r0, qp + DeviceQpDescriptor.QPN_OFFSET) >>> 32));
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
        for (int i = 0; i < 4; i++) {
            world.rank(0).writeHeapLong(signals.offset() + 8L * i, 0);
            world.rank(1).writeHeapLong(signals.offset() + 8L * i, 0);
        }
        world.rank(1).fillHeap(data.offset(), BYTES, (byte) 0);
    }

    static void assertRefused(DeviceErrorException e, ErrorRecordDescriptor.Op op, long reservedBefore) {
        String text = e.getMessage();
        ErrorRecord record = e.record();
        assertEquals(IbgdaErrorDecoder.SET_SIGNAL_RELAXED, record.code(), text);
        assertEquals(op, record.op(), text);
        assertEquals(1, record.peer(), text);
        assertEquals(qpn, record.cmp(), "the record names the QP in cmp, as view.cuh documents: " + text);
        assertTrue(text.contains(String.format(Locale.ROOT, "QP 0x%06x writes with relaxed ordering", qpn)), text);
        assertTrue(text.contains("SignalOp.ADD"), text);
        assertEquals(reservedBefore, readWord(world.rank(0), deviceQp(world.rank(0), 1)
                + DeviceQpDescriptor.RESV_HEAD_OFFSET), "a refused SET reserved send queue slots");
    }

    static long reserved() {
        return readWord(world.rank(0), deviceQp(world.rank(0), 1) + DeviceQpDescriptor.RESV_HEAD_OFFSET);
    }

    @Test
    void aSetSignalIsRefusedAndNothingIsWritten() {
        long before = reserved();
        DeviceErrorException e = assertThrows(DeviceErrorException.class,
                () -> ops.signal(0, 1, signals.offset(), SignalOp.SET, 42));
        assertRefused(e, ErrorRecordDescriptor.Op.SIGNAL, before);
        assertEquals(0, world.rank(1).readHeapLong(signals.offset()), "the refused SET reached the target");
    }

    @ParameterizedTest
    @EnumSource(Scope.class)
    void aPutWithASetSignalIsRefusedBeforeItsData(Scope scope) {
        byte[] payload = new byte[BYTES];
        Arrays.fill(payload, (byte) 0x5a);
        world.rank(0).writeHeap(data.offset(), payload);
        long before = reserved();
        DeviceErrorException e = assertThrows(DeviceErrorException.class, () -> ops.putSignal(0, 1,
                data.offset(), data.offset(), BYTES, scope, signals.offset() + 8, SignalOp.SET, 1));
        assertRefused(e, ErrorRecordDescriptor.Op.PUT_SIGNAL, before);
        byte[] got = new byte[BYTES];
        world.rank(1).readHeap(data.offset(), got);
        assertArrayEquals(new byte[BYTES], got, scope + ": the refused put_signal wrote its data");
        assertEquals(0, world.rank(1).readHeapLong(signals.offset() + 8), scope + ": its signal landed");
    }

    @Test
    void anAddSignalStillGoesThroughTheRelaxedQp() {
        ops.signal(0, 1, signals.offset() + 16, SignalOp.ADD, 5);
        ops.signal(0, 1, signals.offset() + 16, SignalOp.ADD, 6);
        assertEquals(11, world.rank(1).readHeapLong(signals.offset() + 16));
        byte[] payload = new byte[BYTES];
        Arrays.fill(payload, (byte) 0x3c);
        world.rank(0).writeHeap(data.offset(), payload);
        ops.putSignal(0, 1, data.offset(), data.offset(), BYTES, Scope.THREAD, signals.offset() + 16,
                SignalOp.ADD, 1);
        byte[] got = new byte[BYTES];
        world.rank(1).readHeap(data.offset(), got);
        assertArrayEquals(payload, got, "put_signal with ADD over the relaxed QP");
        assertEquals(12, world.rank(1).readHeapLong(signals.offset() + 16));
    }

    @Test
    void aQpWithoutTheFlagStillTakesSet() {
        ops.signal(1, 0, signals.offset() + 24, SignalOp.SET, 9);
        assertEquals(9, world.rank(0).readHeapLong(signals.offset() + 24), "rank 1 -> 0 is not relaxed");
    }
}
