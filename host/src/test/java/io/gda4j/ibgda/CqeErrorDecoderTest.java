package io.gda4j.ibgda;

import io.gda4j.mlx5.CqeOpcode;
import io.gda4j.mlx5.CqeSyndrome;
import io.gda4j.mlx5.Mlx5Opcode;
import io.gda4j.nic.emulated.EmulatedFault;
import io.gda4j.world.ErrorRecord;
import io.gda4j.world.ErrorRecordDescriptor.Code;
import io.gda4j.world.ErrorRecordDescriptor.Op;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The world words an IBGDA error CQE through the decoder ibgda registers, without naming mlx5 or the NIC itself. */
@Timeout(30)
class CqeErrorDecoderTest {
    static ErrorRecord cqeError(int syndrome, int vendor) {
        long seen = syndrome | (long) vendor << 8 | (long) CqeOpcode.REQ_ERR << 16;
        return new ErrorRecord(Code.CQE_ERROR, 0, 1, Op.PUT, 42, Mlx5Opcode.RDMA_WRITE, seen, 1000, 0, 0, 0x12a);
    }

    @Test
    void theWorldWordsAnErrorCqeAsTheHostDoesWithTheEmulatedReason() {
        String text = cqeError(CqeSyndrome.REMOTE_ACCESS.code(), EmulatedFault.UNKNOWN_RKEY.vendorSyndrome())
                .describe(Duration.ofSeconds(1));
        assertTrue(text.startsWith("rank 0, put to peer 1"), text);
        assertTrue(text.contains("RDMA completion error on QP 0x00012a, WQE index 42 (RDMA_WRITE)"), text);
        assertTrue(text.contains("REMOTE_ACCESS (0x13)"), text);
        assertTrue(text.endsWith(" Emulated NIC: the rkey names no registered region."), text);
    }

    @Test
    void aVendorSyndromeOfARealNicGetsNoEmulatedReason() {
        String text = cqeError(CqeSyndrome.REMOTE_ACCESS.code(), 0x88).describe(Duration.ofSeconds(1));
        assertTrue(text.contains("RDMA completion error on QP 0x00012a"), text);
        assertFalse(text.contains("Emulated NIC"), text);
    }

    @Test
    void otherRecordsAreNotItsToWord() {
        ErrorRecord timeout = new ErrorRecord(Code.WAIT_TIMEOUT, 0, 1, Op.WAIT_UNTIL, 0, 1, 0, 1000, 0, 0, 0);
        assertTrue(new CqeErrorDecoder().describe(timeout).isEmpty());
    }
}
