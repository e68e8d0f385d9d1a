package io.gda4j.nic.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.mlx5.CqDoorbellRecordDescriptor;
import io.gda4j.mlx5.CqeEncoder;
import io.gda4j.mlx5.CqeOpcode;
import io.gda4j.mlx5.CqeSyndrome;
import io.gda4j.mlx5.Mlx5Opcode;
import io.gda4j.nic.NicAccess;
import io.gda4j.verbs.VerbsConstants;

import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Set;

import org.junit.jupiter.api.Test;

/** The pure parts of Mlx5Nic and Mlx5Qp: access words, link rates, descriptions, error detection in the CQ. */
class Mlx5NicPartsTest {
    static final int QPN = 0x42;

    @Test
    void accessFlagsAddLocalWriteWhereVerbsDemandsIt() {
        assertEquals(0xf, Mlx5Nic.accessFlags(NicAccess.HEAP, false));
        assertEquals(VerbsConstants.IBV_ACCESS_LOCAL_WRITE | VerbsConstants.IBV_ACCESS_REMOTE_WRITE,
                Mlx5Nic.accessFlags(Set.of(NicAccess.REMOTE_WRITE), false));
        assertEquals(VerbsConstants.IBV_ACCESS_REMOTE_READ, Mlx5Nic.accessFlags(Set.of(NicAccess.REMOTE_READ), false),
                "remote read alone is allowed without local write");
        assertEquals(0, Mlx5Nic.accessFlags(EnumSet.noneOf(NicAccess.class), false));
        assertEquals(0xf | VerbsConstants.IBV_ACCESS_RELAXED_ORDERING, Mlx5Nic.accessFlags(NicAccess.HEAP, true));
    }

    @Test
    void linkRatesFromWidthAndSpeedCodes() {
        assertEquals(200, Mlx5Nic.linkGbps(2, 64), "4x HDR");
        assertEquals(400, Mlx5Nic.linkGbps(2, 128), "4x NDR");
        assertEquals(100, Mlx5Nic.linkGbps(2, 32), "4x EDR = 100 GbE");
        assertEquals(56, Mlx5Nic.linkGbps(2, 16), "4x FDR");
        assertEquals(2.5, Mlx5Nic.linkGbps(1, 1));
        assertEquals(0, Mlx5Nic.linkGbps(3, 64));
        assertEquals("mlx5_0 port 1 (RoCE, GID index 3 chosen automatically (RoCE v2, IPv4 10.0.0.1), 200 Gb/s)",
                Mlx5Nic.describe("mlx5_0", 1, true, "GID index 3 chosen automatically (RoCE v2, IPv4 10.0.0.1)", 2,
                        64));
        assertEquals("mlx5_1 port 2 (InfiniBand, LID 0x12, 2.5 Gb/s)",
                Mlx5Nic.describe("mlx5_1", 2, false, "LID 0x12", 1, 1));
        assertEquals("mlx5_1 port 1 (InfiniBand, LID 0x12)", Mlx5Nic.describe("mlx5_1", 1, false, "LID 0x12", 0, 0));
    }

    @Test
    void anErrorCqeAtOrJustBeforeTheConsumerIndexMeansError() {
        ByteBuffer cq = ByteBuffer.allocateDirect(8 * 64);
        CqeEncoder.initialize(cq);
        assertFalse(Mlx5Qp.errorObserved(cq, 8, 0), "a fresh CQ");
        CqeEncoder.writeRequester(cq, 0, QPN, 0, Mlx5Opcode.RDMA_WRITE, 0);
        CqeEncoder.writeRequester(cq, 1, QPN, 1, Mlx5Opcode.RDMA_WRITE, 0);
        assertFalse(Mlx5Qp.errorObserved(cq, 8, 1));
        assertFalse(Mlx5Qp.errorObserved(cq, 8, 2));
        CqeEncoder.writeError(cq, 2, CqeOpcode.REQ_ERR, QPN, 2, Mlx5Opcode.RDMA_WRITE,
                CqeSyndrome.REMOTE_ACCESS.code(), 0x88);
        assertTrue(Mlx5Qp.errorObserved(cq, 8, 2), "not consumed yet");
        assertTrue(Mlx5Qp.errorObserved(cq, 8, 3), "consumed");
        CqeEncoder.writeError(cq, 3, CqeOpcode.REQ_ERR, QPN, 3, Mlx5Opcode.RDMA_WRITE,
                CqeSyndrome.WR_FLUSH.code(), 0);
        assertTrue(Mlx5Qp.errorObserved(cq, 8, 4), "flushed WQEs after the error keep saying so");
        // the consumer index is 24 bits and wraps; slot ci - 1 of ci = 0 is the last slot
        assertFalse(Mlx5Qp.errorObserved(cq, 8, 1 << 24 & CqDoorbellRecordDescriptor.CONSUMER_INDEX_MASK));
    }
}
