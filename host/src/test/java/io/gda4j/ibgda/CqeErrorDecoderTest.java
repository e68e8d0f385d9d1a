package io.gda4j.ibgda;

import io.gda4j.world.ErrorRecord;
import io.gda4j.world.ErrorRecordDescriptor.Code;
import io.gda4j.world.ErrorRecordDescriptor.Op;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The decoder ibgda registers with the world words error CQEs only (IbgdaErrorRecordTest checks its text through
 * {@link ErrorRecord#describe}, which finds it by ServiceLoader).
 */
@Timeout(30)
class CqeErrorDecoderTest {
    @Test
    void recordsOtherThanErrorCqesAreNotItsToWord() {
        for (Code code : Code.values()) {
            ErrorRecord r = new ErrorRecord(code, 0, 1, Op.PUT, 0, 1, 0, 1000, 0, 0, 0);
            assertTrue(new CqeErrorDecoder().describe(r).isPresent() == (code == Code.CQE_ERROR), code.name());
        }
    }
}
