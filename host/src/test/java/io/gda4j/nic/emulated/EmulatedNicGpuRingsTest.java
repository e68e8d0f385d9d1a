package io.gda4j.nic.emulated;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Pointer;

import io.gda4j.mlx5.DoorbellDescriptor;
import io.gda4j.mlx5.WqeDescriptor;
import io.gda4j.mlx5.WqeEncoder;
import io.gda4j.nic.Nic;
import io.gda4j.nic.NicQp;
import io.gda4j.nic.QpAddress;
import io.gda4j.nic.QpPair;
import io.gda4j.nic.QpRings;
import io.gda4j.nic.QpSpec;
import io.gda4j.nic.QpState;
import io.gda4j.nic.RingPlacement;
import io.gda4j.nic.RingPoster;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.TimeoutException;

/**
 * The emulated NIC with a QP's rings in "GPU memory" ({@link RingPlacement#GPU}; on this platform another host
 * allocation the engine must copy, as it must copy real GPU memory): a poster writing the GPU-side rings gets its
 * work executed and completed there, over several laps of the ring and of the CQ; the engine executes what the GPU
 * side holds, never a stale mirror; it checks the GPU side's doorbell record; and such a QP has no host rings.
 */
class EmulatedNicGpuRingsTest extends TwoHeapNicTest {
    /** {@code qp} as a poster on its GPU-side rings sees it (here they are host-addressable). */
    static NicQp onDeviceRings(NicQp qp) {
        return new NicQp() {
            @Override
            public int qpn() {
                return qp.qpn();
            }

            @Override
            public String label() {
                return qp.label();
            }

            @Override
            public Nic nic() {
                return qp.nic();
            }

            @Override
            public QpAddress address() {
                return qp.address();
            }

            @Override
            public void connect(QpAddress peer) {
                qp.connect(peer);
            }

            @Override
            public QpState state() {
                return qp.state();
            }

            @Override
            public QpRings deviceRings() {
                return qp.deviceRings();
            }

            @Override
            public QpRings hostRings() {
                return qp.deviceRings();
            }

            @Override
            public void close() {
                qp.close();
            }
        };
    }

    QpPair gpuPair(int sqWqebbs) {
        return nic.createConnectedPair(QpSpec.of(null, sqWqebbs, "a->b").withRings(RingPlacement.GPU),
                QpSpec.of(null, sqWqebbs, "b->a").withRings(RingPlacement.GPU));
    }

    @Test
    void workPostedOnTheGpuSideRingsRunsAndCompletesThereOverManyLaps() throws TimeoutException {
        open(new EmulatedNicConfig("spin", false));
        try (QpPair qps = gpuPair(8)) {
            NicQp a = qps.first();
            assertTrue(nic.gpuRingsUnsupportedReason().isEmpty());
            IllegalStateException noHost = assertThrows(IllegalStateException.class, a::hostRings);
            assertTrue(noHost.getMessage().contains("GPU memory"), noHost.getMessage());
            QpRings device = a.deviceRings();
            EmulatedQp e = (EmulatedQp) a;
            assertNotEquals(e.rings.hostAddress(), device.sqBuf(), "the SQ is not in the host ring memory");
            assertEquals(e.rings.deviceAddress() + e.doorbellOffset, device.doorbell(), "the doorbell is the NIC's");
            RingPoster p = new RingPoster(onDeviceRings(a));
            byte[] source = new byte[64];
            for (int i = 0; i < source.length; i++) {
                source[i] = (byte) (i * 3 + 1);
            }
            new Pointer(heapA).write(0, source, 0, source.length);
            for (int round = 0; round < 20; round++) { // 60 WQEBBs through a ring of 8 and a CQ of 8
                p.postWrite(heapB + 256, memB.rkey(), heapA, memA.lkey(), 64, TIMEOUT);
                p.postWriteInline(heapB + 512, memB.rkey(), new byte[] {(byte) round, 2, 3, 4, 5, 6, 7, 8}, TIMEOUT);
                p.postFetchAdd(heapB, memB.rkey(), 1, heapA + 1024, memA.lkey(), TIMEOUT);
                complete(p);
            }
            assertEquals(20, new Pointer(heapB).getLong(0), "every ADD ran once");
            assertArrayEquals(source, new Pointer(heapB + 256).getByteArray(0, 64));
            assertEquals(19, new Pointer(heapB + 512).getByte(0));
            assertTrue(platform.deviceRingCopies > 20, "the engine read the GPU side (" + platform.deviceRingCopies
                    + " copies)");
            assertEquals(0, nic.stats().errors(), nic.faults().toString());
        }
    }

    @Test
    void theEngineExecutesWhatTheGpuSideHoldsNotItsMirror() {
        open(new EmulatedNicConfig("spin", false));
        try (QpPair qps = gpuPair(8)) {
            EmulatedQp a = (EmulatedQp) qps.first();
            QpRings device = a.deviceRings();
            // A valid WRITE in the engine's mirror only; the GPU side's slot holds nothing: the record and doorbell
            // name it, as a poster that wrote the wrong memory would.
            WqeEncoder.writeRdmaWrite(a.sq, 0, a.qpn(), WqeDescriptor.FM_CE_SE_CQ_UPDATE, heapB, memB.rkey(), heapA,
                    memA.lkey(), 8);
            ByteBuffer dbrec = new Pointer(device.dbrec()).getByteBuffer(0, 8).order(ByteOrder.BIG_ENDIAN);
            dbrec.putInt(4, 1);
            DoorbellDescriptor.putDoorbellRelease(new Pointer(device.doorbell()).getByteBuffer(0, 8), 0, 1, a.qpn());
            for (int i = 0; i < 8; i++) {
                nic.engine().doWork();
            }
            assertEquals(QpState.ERROR, a.state(), "the GPU side's slot is not a WQE: " + nic.faults());
            assertEquals(0, new Pointer(heapB).getLong(0), "nothing was written");
        }
    }

    @Test
    void aDoorbellAheadOfTheGpuSidesRecordIsRefused() {
        open(new EmulatedNicConfig("spin", false));
        try (QpPair qps = gpuPair(8)) {
            EmulatedQp a = (EmulatedQp) qps.first();
            QpRings device = a.deviceRings();
            ByteBuffer sq = new Pointer(device.sqBuf()).getByteBuffer(0, 8L * 64);
            WqeEncoder.writeRdmaWrite(sq, 0, a.qpn(), WqeDescriptor.FM_CE_SE_CQ_UPDATE, heapB, memB.rkey(), heapA,
                    memA.lkey(), 8);
            a.dbrec.order(ByteOrder.BIG_ENDIAN).putInt(4, 1); // the mirror's record says 1; the GPU side's says 0
            DoorbellDescriptor.putDoorbellRelease(new Pointer(device.doorbell()).getByteBuffer(0, 8), 0, 1, a.qpn());
            for (int i = 0; i < 8; i++) {
                nic.engine().doWork();
            }
            assertEquals(QpState.ERROR, a.state(), "the engine read the GPU side's record, which does not cover the"
                    + " doorbell: " + nic.faults());
            assertTrue(nic.faults().toString().contains("the doorbell record's send counter is 0"),
                    nic.faults().toString());
            assertEquals(0, new Pointer(heapB).getLong(0), "nothing was written");
        }
    }
}
