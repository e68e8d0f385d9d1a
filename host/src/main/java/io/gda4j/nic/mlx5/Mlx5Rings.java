package io.gda4j.nic.mlx5;

import io.gda4j.mlx5.CqDoorbellRecordDescriptor;
import io.gda4j.mlx5.CqeDescriptor;
import io.gda4j.mlx5.DoorbellDescriptor;
import io.gda4j.mlx5.DoorbellRecordDescriptor;
import io.gda4j.mlx5.WqeDescriptor;
import io.gda4j.nic.DoorbellKind;
import io.gda4j.nic.NicException;
import io.gda4j.nic.QpRings;
import io.gda4j.verbs.Mlx5CqBuffers;
import io.gda4j.verbs.Mlx5QpBuffers;

import java.util.List;
import java.util.function.LongUnaryOperator;

/**
 * A QP's rings as libmlx5 made them ({@code mlx5dv_init_obj}): checked against what gda4j's encoder, decoder and
 * device code assume, turned into {@link QpRings} for the host, and into the page ranges that must be mapped into a
 * GPU and the GPU addresses that result. Pure functions: the tests feed them synthetic buffers.
 *
 * <p>Where each ring lives: the send queue ({@code mlx5dv_qp.sq.buf}, inside the QP buffer after the receive
 * queue), the QP and CQ doorbell records (8-byte slots in libmlx5's shared doorbell-record pages), the CQ ring
 * ({@code mlx5dv_cq.buf}) are ordinary host memory allocated by libmlx5 and are mapped with
 * {@code cuMemHostRegister(PORTABLE|DEVICEMAP)}; the doorbell register ({@code mlx5dv_qp.bf.reg}, at offset 0x800
 * or beyond of a UAR page that libmlx5 mmapped from the device) is NIC MMIO and needs
 * {@code cuMemHostRegister(PORTABLE|DEVICEMAP|IOMEMORY)}.
 */
final class Mlx5Rings {
    /** One object to map into the GPU. */
    record Region(String what, long address, long lengthBytes, boolean ioMemory) {
        PageRange pages(long pageSize) {
            return PageRange.around(address, lengthBytes, pageSize);
        }
    }

    private Mlx5Rings() {
    }

    /**
     * Checks what libmlx5 made and returns the rings as the host addresses them.
     *
     * @param qpn            the QP number
     * @param qp             {@code mlx5dv_qp}
     * @param cq             {@code mlx5dv_cq} of the QP's send CQ
     * @param maxInlineBytes the inline limit the QP was granted
     * @param label          for messages
     * @throws NicException when a layout differs from what gda4j's WQE/CQE code handles
     */
    static QpRings hostRings(int qpn, Mlx5QpBuffers qp, Mlx5CqBuffers cq, int maxInlineBytes, String label) {
        String who = String.format("%s (QP 0x%06x)", label, qpn);
        if (qp.sqStride() != WqeDescriptor.WQEBB_SIZE) {
            throw new NicException(who + ": libmlx5 reports a send queue stride of " + qp.sqStride()
                    + " bytes; gda4j writes " + WqeDescriptor.WQEBB_SIZE + "-byte WQEBBs");
        }
        if (!isPowerOfTwo(qp.sqWqeCnt())) {
            throw new NicException(who + ": libmlx5 reports " + qp.sqWqeCnt() + " send queue WQEBBs, not a power of"
                    + " two");
        }
        if (cq.cqeSize() != CqeDescriptor.CQE_SIZE) {
            throw new NicException(who + ": the CQ has " + cq.cqeSize() + "-byte CQEs, but gda4j's host and device"
                    + " code read " + CqeDescriptor.CQE_SIZE + "-byte CQEs. libmlx5 makes 128-byte CQEs only when"
                    + " the environment says MLX5_CQE_SIZE=128: unset it for this process.");
        }
        if (!isPowerOfTwo(cq.cqeCnt()) || cq.cqeCnt() < qp.sqWqeCnt()) {
            throw new NicException(who + ": the CQ holds " + cq.cqeCnt() + " CQEs for a send queue of "
                    + qp.sqWqeCnt() + " WQEBBs; it must be a power of two at least as large");
        }
        if (qp.bfReg() == 0 || qp.dbrec() == 0 || qp.sqBuf() == 0 || cq.buf() == 0 || cq.dbrec() == 0) {
            throw new NicException(who + ": mlx5dv_init_obj left a ring address empty: " + qp + ", " + cq);
        }
        try {
            return new QpRings(qpn, qp.sqBuf(), qp.sqWqeCnt(), qp.dbrec(), qp.bfReg(), DoorbellKind.MMIO, cq.buf(),
                    cq.cqeCnt(), cq.dbrec(), maxInlineBytes);
        } catch (IllegalArgumentException e) {
            throw new NicException(who + ": " + e.getMessage() + " (" + qp + ", " + cq + ")", e);
        }
    }

    /** What must be mapped into a GPU for it to post on the QP and reap its CQ; only the UAR page is I/O memory. */
    static List<Region> regions(QpRings host) {
        return List.of(
                new Region("send queue", host.sqBuf(), (long) host.sqWqebbs() * WqeDescriptor.WQEBB_SIZE, false),
                new Region("QP doorbell record", host.dbrec(), DoorbellRecordDescriptor.SIZE, false),
                new Region("CQ ring", host.cqBuf(), (long) host.cqeCount() * CqeDescriptor.CQE_SIZE, false),
                new Region("CQ doorbell record", host.cqDbrec(), CqDoorbellRecordDescriptor.SIZE, false),
                new Region("UAR doorbell register", host.doorbell(), DoorbellDescriptor.SIZE, true));
    }

    /** The same rings as a GPU addresses them, given how each host address maps. */
    static QpRings deviceRings(QpRings host, LongUnaryOperator toDevice) {
        return new QpRings(host.qpn(), toDevice.applyAsLong(host.sqBuf()), host.sqWqebbs(),
                toDevice.applyAsLong(host.dbrec()), toDevice.applyAsLong(host.doorbell()), host.doorbellKind(),
                toDevice.applyAsLong(host.cqBuf()), host.cqeCount(), toDevice.applyAsLong(host.cqDbrec()),
                host.maxInlineBytes());
    }

    private static boolean isPowerOfTwo(int n) {
        return n > 0 && (n & (n - 1)) == 0;
    }
}
