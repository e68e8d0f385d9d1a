package io.gda4j.ibgda;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.mlx5.CqeOpcode;
import io.gda4j.mlx5.CqeSyndrome;
import io.gda4j.mlx5.Mlx5Opcode;
import io.gda4j.nic.emulated.EmulatedFault;
import io.gda4j.world.ErrorRecord;
import io.gda4j.world.ErrorRecordDescriptor.Op;

import org.junit.jupiter.api.Test;

import java.time.Duration;

/** The host's text for the IBGDA error records the device writes (gda4j/transport/ibgda/qp.cuh). */
class IbgdaErrorRecordTest {
    static final Duration TIMEOUT = Duration.ofSeconds(10);

    @Test
    void errorCqeNamesQpWqeIndexOpcodeSyndromeAndTheEmulatedReason() {
        long seen = CqeSyndrome.REMOTE_ACCESS.code() | (long) EmulatedFault.UNKNOWN_RKEY.vendorSyndrome() << 8
                | (long) CqeOpcode.REQ_ERR << 16;
        ErrorRecord r = new ErrorRecord(IbgdaErrorDecoder.CQE_ERROR, 0, 1, Op.PUT, 42, Mlx5Opcode.RDMA_WRITE, seen, 0, 0, 0,
                0x000105);
        String m = r.describe(TIMEOUT);
        assertTrue(m.startsWith("rank 0, put to peer 1"), m);
        assertTrue(m.contains("QP 0x000105"), m);
        assertTrue(m.contains("WQE index 42 (RDMA_WRITE)"), m);
        assertTrue(m.contains("REMOTE_ACCESS (0x13)"), m);
        assertTrue(m.contains("REQ_ERR CQE"), m);
        assertTrue(m.contains("Emulated NIC: the rkey names no registered region."), m);
    }

    @Test
    void realNicVendorSyndromesGetNoEmulatedExplanation() {
        long seen = CqeSyndrome.TRANSPORT_RETRY_EXC.code() | 0x81L << 8 | (long) CqeOpcode.REQ_ERR << 16;
        String m = new ErrorRecord(IbgdaErrorDecoder.CQE_ERROR, 1, 0, Op.QUIET, 7, Mlx5Opcode.ATOMIC_FA, seen, 0, 0, 0, 9)
                .describe(TIMEOUT);
        assertTrue(m.contains("TRANSPORT_RETRY_EXC") && m.contains("ATOMIC_FA") && !m.contains("Emulated"), m);
    }

    @Test
    void sendQueueFullAndPostingStallsSayWhatWasAwaited() {
        String full = new ErrorRecord(IbgdaErrorDecoder.SQ_FULL, 0, 1, Op.PUT, 5000, 3977, 3900, 10_000_000_000L, 2, 0, 0x101)
                .describe(TIMEOUT);
        assertTrue(full.contains("send queue of QP 0x000101 stayed full") && full.contains("needs 3977")
                && full.contains("only 3900"), full);
        String stall = new ErrorRecord(IbgdaErrorDecoder.POST_TIMEOUT, 0, 1, Op.QUIET, 10, 20, 10, 10_000_000_000L, 0, 0, 0x101)
                .describe(TIMEOUT);
        assertTrue(stall.contains("posting on QP 0x000101 stalled") && stall.contains("waiting for 20"), stall);
    }
}
