package io.gda4j.nic.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.ibgda.DeviceQpDescriptor;
import io.gda4j.mlx5.DoorbellRecordDescriptor;
import io.gda4j.nic.DoorbellKind;
import io.gda4j.nic.NicException;
import io.gda4j.nic.QpRings;
import io.gda4j.verbs.Mlx5CqBuffers;
import io.gda4j.verbs.Mlx5QpBuffers;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * From synthetic mlx5dv_init_obj results to host rings, GPU mappings, device rings and the DeviceQp rings line the
 * IBGDA transport writes for a kernel.
 */
class Mlx5RingsTest {
    static final int QPN = 0x00012a;
    static final long PAGE = 4096;
    // Shaped like libmlx5's: QP buffer page aligned with the SQ after a 64-byte RQ, doorbell records in a shared
    // page, bf.reg at 0x800 of a UAR page, CQ ring page aligned.
    static final long QP_BUF = 0x7f3a10000000L;
    static final long DBR_PAGE = 0x7f3a20000000L;
    static final long UAR_PAGE = 0x7f3a30000000L;
    static final long CQ_BUF = 0x7f3a40000000L;
    static final Mlx5QpBuffers QP = new Mlx5QpBuffers(DBR_PAGE + 0x40, QP_BUF + 64, 1024, 64, QP_BUF, 1, 64,
            UAR_PAGE + 0x800, 256);
    static final Mlx5CqBuffers CQ = new Mlx5CqBuffers(CQ_BUF, DBR_PAGE + 0x80, 1024, 64, UAR_PAGE, 0x77);
    /** A GPU that sees host memory at +1 TiB (no unified host pointer), the UAR somewhere else. */
    static final long HOST_TO_GPU = 1L << 40;
    static final long UAR_GPU = 0x7e0000000000L;

    @Test
    void hostRingsAreTheMlx5dvAddresses() {
        QpRings host = Mlx5Rings.hostRings(QPN, QP, CQ, 316, "rank 0 -> rank 1");
        assertEquals(new QpRings(QPN, QP_BUF + 64, 1024, DBR_PAGE + 0x40, UAR_PAGE + 0x800, DoorbellKind.MMIO,
                CQ_BUF, 1024, DBR_PAGE + 0x80, 316), host);
        // the send counter of the doorbell record is the second word of mlx5dv_qp.dbrec
        assertEquals(4, DoorbellRecordDescriptor.SEND_COUNTER_OFFSET);
    }

    @Test
    void fiveObjectsAreMappedOnlyTheUarAsIoMemory() {
        QpRings host = Mlx5Rings.hostRings(QPN, QP, CQ, 316, "q");
        List<Mlx5Rings.Region> regions = Mlx5Rings.regions(host);
        assertEquals(5, regions.size());
        assertEquals(List.of(new PageRange(QP_BUF, QP_BUF + 17 * PAGE), new PageRange(DBR_PAGE, DBR_PAGE + PAGE),
                new PageRange(CQ_BUF, CQ_BUF + 16 * PAGE), new PageRange(DBR_PAGE, DBR_PAGE + PAGE),
                new PageRange(UAR_PAGE, UAR_PAGE + PAGE)), regions.stream().map(r -> r.pages(PAGE)).toList());
        assertEquals(List.of(false, false, false, false, true),
                regions.stream().map(Mlx5Rings.Region::ioMemory).toList());
    }

    @Test
    void fillsTheDeviceQpRingsLine() {
        QpRings device = Mlx5Rings.deviceRings(Mlx5Rings.hostRings(QPN, QP, CQ, 316, "q"),
                a -> a >= UAR_PAGE && a < UAR_PAGE + PAGE ? UAR_GPU + (a - UAR_PAGE) : a + HOST_TO_GPU);
        ByteBuffer qp = ByteBuffer.allocate(DeviceQpDescriptor.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        long wqeSizes = 0x7e1000000000L;
        // what the IBGDA transport writes into line 0 from NicQp.deviceRings()
        qp.putLong(DeviceQpDescriptor.SQ_BUF_OFFSET, device.sqBuf());
        qp.putLong(DeviceQpDescriptor.DBREC_OFFSET, device.dbrec());
        qp.putLong(DeviceQpDescriptor.DOORBELL_OFFSET, device.doorbell());
        qp.putLong(DeviceQpDescriptor.CQ_BUF_OFFSET, device.cqBuf());
        qp.putLong(DeviceQpDescriptor.CQ_DBREC_OFFSET, device.cqDbrec());
        qp.putLong(DeviceQpDescriptor.WQE_SIZES_OFFSET, wqeSizes);
        qp.putInt(DeviceQpDescriptor.SQ_WQEBBS_OFFSET, device.sqWqebbs());
        qp.putInt(DeviceQpDescriptor.CQE_COUNT_OFFSET, device.cqeCount());
        qp.putInt(DeviceQpDescriptor.QPN_OFFSET, device.qpn());
        qp.putInt(DeviceQpDescriptor.MAX_INLINE_OFFSET, device.maxInlineBytes());

        assertEquals(QP_BUF + 64 + HOST_TO_GPU, qp.getLong(DeviceQpDescriptor.SQ_BUF_OFFSET));
        assertEquals(DBR_PAGE + 0x40 + HOST_TO_GPU, qp.getLong(DeviceQpDescriptor.DBREC_OFFSET));
        assertEquals(UAR_GPU + 0x800, qp.getLong(DeviceQpDescriptor.DOORBELL_OFFSET), "bf.reg keeps its page offset");
        assertEquals(CQ_BUF + HOST_TO_GPU, qp.getLong(DeviceQpDescriptor.CQ_BUF_OFFSET));
        assertEquals(DBR_PAGE + 0x80 + HOST_TO_GPU, qp.getLong(DeviceQpDescriptor.CQ_DBREC_OFFSET));
        assertEquals(1024, qp.getInt(DeviceQpDescriptor.SQ_WQEBBS_OFFSET));
        assertEquals(1024, qp.getInt(DeviceQpDescriptor.CQE_COUNT_OFFSET));
        assertEquals(QPN, qp.getInt(DeviceQpDescriptor.QPN_OFFSET));
        assertEquals(DoorbellKind.MMIO, device.doorbellKind(), "a real NIC's doorbell is a UAR register");
        assertEquals(316, qp.getInt(DeviceQpDescriptor.MAX_INLINE_OFFSET));
    }

    @Test
    void rejects128ByteCqesAndSaysWhichVariableMadeThem() {
        Mlx5CqBuffers big = new Mlx5CqBuffers(CQ_BUF, DBR_PAGE + 0x80, 1024, 128, UAR_PAGE, 0x77);
        NicException e = assertThrows(NicException.class, () -> Mlx5Rings.hostRings(QPN, QP, big, 0, "q"));
        assertEquals("q (QP 0x00012a): the CQ has 128-byte CQEs, but gda4j's host and device code read 64-byte"
                + " CQEs. libmlx5 makes 128-byte CQEs only when the environment says MLX5_CQE_SIZE=128: unset it for"
                + " this process.", e.getMessage());
    }

    @Test
    void rejectsOtherLayoutsGda4jCannotPostTo() {
        Mlx5QpBuffers stride = new Mlx5QpBuffers(QP.dbrec(), QP.sqBuf(), 1024, 128, QP_BUF, 1, 64, QP.bfReg(), 256);
        assertTrue(assertThrows(NicException.class, () -> Mlx5Rings.hostRings(QPN, stride, CQ, 0, "q"))
                .getMessage().contains("stride of 128 bytes"));
        Mlx5CqBuffers small = new Mlx5CqBuffers(CQ_BUF, DBR_PAGE + 0x80, 512, 64, UAR_PAGE, 0x77);
        assertTrue(assertThrows(NicException.class, () -> Mlx5Rings.hostRings(QPN, QP, small, 0, "q"))
                .getMessage().contains("the CQ holds 512 CQEs for a send queue of 1024 WQEBBs"));
        Mlx5QpBuffers noUar = new Mlx5QpBuffers(QP.dbrec(), QP.sqBuf(), 1024, 64, QP_BUF, 1, 64, 0, 0);
        assertTrue(assertThrows(NicException.class, () -> Mlx5Rings.hostRings(QPN, noUar, CQ, 0, "q"))
                .getMessage().contains("left a ring address empty"));
        Mlx5QpBuffers odd = new Mlx5QpBuffers(QP.dbrec(), QP.sqBuf() + 8, 1024, 64, QP_BUF, 1, 64, QP.bfReg(), 0);
        assertTrue(assertThrows(NicException.class, () -> Mlx5Rings.hostRings(QPN, odd, CQ, 0, "q"))
                .getMessage().contains("64-byte"));
    }
}
