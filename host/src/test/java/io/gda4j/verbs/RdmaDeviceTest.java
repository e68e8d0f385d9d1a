package io.gda4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gda4j.mlx5.CqeDescriptor;
import io.gda4j.mlx5.WqeDescriptor;

import java.nio.ByteBuffer;

import org.junit.jupiter.api.Test;

/**
 * Set-up on a real RDMA device: open, query, PD, MRs, CQ, a loopback RC QP brought to RTS, and the mlx5 buffers.
 * Skipped, with the status sentence, on machines without one (every machine in this workplace).
 */
class RdmaDeviceTest {
    @Test
    void loopbackQueuePairReachesRts() {
        VerbsStatus status = Verbs.status();
        assumeTrue(status.kind() == VerbsStatus.Kind.DEVICES_FOUND, "no RDMA device here: " + status.sentence());

        RdmaContext context = RdmaContext.openFirst();
        try (context) {
            DeviceAttributes device = context.queryDevice();
            assertTrue(device.physPortCount() >= 1, device::toString);
            PortAttributes port = context.queryPort(1);
            assumeTrue(port.isActive(), "port 1 of " + context.deviceName() + " is "
                    + VerbsConstants.portStateName(port.state()));
            Gid gid = port.isEthernet() ? context.queryGid(1, 0) : Gid.zero();

            ProtectionDomain pd = context.allocateProtectionDomain();
            ByteBuffer buffer = ByteBuffer.allocateDirect(1 << 16);
            MemoryRegion mr = pd.registerHostMemory(buffer, VerbsConstants.IBV_ACCESS_LOCAL_WRITE
                    | VerbsConstants.IBV_ACCESS_REMOTE_WRITE | VerbsConstants.IBV_ACCESS_REMOTE_READ
                    | VerbsConstants.IBV_ACCESS_REMOTE_ATOMIC);
            assertEquals(buffer.capacity(), mr.lengthBytes());
            assertNotEquals(0, mr.rkey());
            CompletionQueue cq = context.createCompletionQueue(64);
            assertTrue(cq.capacity() >= 64);
            QueuePair qp = pd.createQueuePair(cq, cq, QueuePairCapabilities.sendOnly(64, 64));
            RcConnectOptions options = RcConnectOptions.defaults().withPathMtu(Math.min(port.activeMtu(),
                    VerbsConstants.IBV_MTU_1024)).withRdAtomic(Math.min(16, device.maxQpRdAtom()));
            assertThrows(IllegalStateException.class, () -> qp.toRts(0, options));
            qp.connect(new RcPeer(qp.qpNumber(), port.lid(), gid, 0x123), 0x123, options);
            assertEquals(VerbsConstants.IBV_QPS_RTS, qp.state());

            if (LibMlx5.isAvailable()) {
                Mlx5QpBuffers sq = qp.mlx5Buffers();
                assertEquals(WqeDescriptor.WQEBB_SIZE, sq.sqStride());
                assertEquals(0, sq.sqWqeCnt() & (sq.sqWqeCnt() - 1), "power of two");
                assertNotEquals(0L, sq.bfReg());
                Mlx5CqBuffers cqBuffers = cq.mlx5Buffers();
                assertEquals(CqeDescriptor.CQE_SIZE, cqBuffers.cqeSize());
            }
            MemoryRegion nullMr = pd.allocateNullMemoryRegion();
            assertNotEquals(0, nullMr.lkey());
            assertEquals(6, context.openResourceCount());
            mr.close();
            mr.close();
            assertEquals(5, context.openResourceCount());
        }
        assertTrue(context.isClosed());
        assertEquals(0, context.openResourceCount());
    }
}
