package io.gda4j.world;

import io.gda4j.p2p.P2pErrorDecoder;
import io.gda4j.transport.Transport;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.cuda.DevicePointer;
import io.gda4j.p2p.P2pTransport;

import jcuda.Pointer;
import jcuda.driver.JCudaDriver;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

/**
 * A p2p link without native atomics (PCIe without {@code CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED}): the device
 * refuses SIGNAL_ADD, atomic_add and put_signal with ADD to that peer, writing nothing, and still serves SET signals.
 * The machines here have NVLink everywhere, so the test marks rank 0's entry for rank 1 the way
 * {@link P2pTransport#connect} marks such a link.
 */
@Tag("gpu")
@Timeout(120)
class P2pAtomicsGpuTest {
    @Test
    void addsToAPeerWithoutNativeAtomicsAreRefused() {
        try (LocalWorld w = GpuWorlds.twoRanks(8L << 20, Duration.ofSeconds(10))) {
            assertEquals(Transport.P2P, w.transport(0, 1));
            DeviceOps ops = new DeviceOps(w);
            HeapBuffer data = w.heap().allocate(4096);
            HeapBuffer signals = w.heap().allocateSignals(2);
            Rank r0 = w.rank(0);
            Rank r1 = w.rank(1);
            r1.fillHeap(data.offset(), 64, (byte) 0);
            r1.fillHeap(signals.offset(), 16, (byte) 0);
            r0.context().makeCurrent();
            long entry = r0.deviceView().address() + DeviceViewDescriptor.peerEntryOffset(1)
                    + DeviceViewDescriptor.PEER_HANDLE_OFFSET;
            JCudaDriver.cuMemcpyHtoD(DevicePointer.of(entry), Pointer.to(new long[] {P2pTransport.NO_NATIVE_ATOMICS}),
                    Long.BYTES);

            DeviceErrorException signal = assertThrows(DeviceErrorException.class,
                    () -> ops.signal(0, 1, signals.offset(), SignalOp.ADD, 1));
            assertEquals(P2pErrorDecoder.NO_NATIVE_ATOMICS, signal.record().code(), signal.getMessage());
            assertTrue(signal.getMessage().contains("no native atomics"), signal.getMessage());
            assertEquals(0, r1.readHeapLong(signals.offset()), "the refused ADD wrote nothing");
            w.clearErrors();

            DeviceErrorException putSignal = assertThrows(DeviceErrorException.class,
                    () -> ops.putSignal(0, 1, data.offset(), data.offset(), 64, Scope.BLOCK, signals.offset(),
                            SignalOp.ADD, 1));
            assertEquals(P2pErrorDecoder.NO_NATIVE_ATOMICS, putSignal.record().code(), putSignal.getMessage());
            w.clearErrors();

            ops.signal(0, 1, signals.offset(), SignalOp.SET, 5);
            assertEquals(5, r1.readHeapLong(signals.offset()), "a SET signal is a plain store: still served");
            byte[] zeros = new byte[64];
            byte[] got = new byte[64];
            r1.readHeap(data.offset(), got);
            assertArrayEquals(zeros, got, "put_signal with ADD was refused before its data was written");
        }
    }
}
