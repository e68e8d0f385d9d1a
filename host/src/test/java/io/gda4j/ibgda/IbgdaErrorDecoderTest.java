package io.gda4j.ibgda;

import io.gda4j.world.ErrorRecord;
import io.gda4j.world.ErrorRecordDescriptor.Code;
import io.gda4j.world.ErrorRecordDescriptor.Op;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The decoder ibgda registers with the world words its own codes only (IbgdaErrorRecordTest checks its text through
 * {@link ErrorRecord#describe}, which finds it by ServiceLoader).
 */
@Timeout(30)
class IbgdaErrorDecoderTest {
    @Test
    void recordsOtherThanItsOwnAreNotItsToWord() {
        IbgdaErrorDecoder d = new IbgdaErrorDecoder();
        assertEquals(Map.of(10, "CQE_ERROR", 11, "SQ_FULL", 12, "POST_TIMEOUT", 13, "INLINE_TOO_LARGE",
                14, "SET_SIGNAL_RELAXED"), d.codes());
        for (Code code : Code.values()) {
            assertFalse(d.codes().containsKey(code.value()), code.name() + " is the world's");
            ErrorRecord r = new ErrorRecord(code.value(), 0, 1, Op.PUT, 0, 1, 0, 1000, 0, 0, 0);
            assertThrows(IllegalArgumentException.class, () -> d.describe(r, "rank 0", Duration.ofSeconds(1)));
        }
        for (int code : d.codes().keySet()) {
            assertFalse(d.isTimeout(code), "ibgda's stalls are reported as device errors, not wait timeouts");
            assertTrue(new ErrorRecord(code, 0, 1, Op.PUT, 0, 1, 0, 1000, 0, 0, 0)
                    .describe(Duration.ofSeconds(1)).startsWith("rank 0, put to peer 1"));
        }
    }
}
