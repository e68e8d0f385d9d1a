package io.gda4j.moe.ht;

import io.gda4j.moe.MoeConfig;
import io.gda4j.moe.core.MoeParamsHeaderLayout;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.world.HeaderValues;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/** MoeParamsDescriptor against gda4j/moe/params.cuh field by field, its header too, and the signal-word formulas. */
class MoeParamsLayoutTest {
    @Test
    void javaAndCudaAgree(@TempDir Path dir) throws Exception {
        Map<String, Long> h = HeaderValues.of("moe_params.cpp", dir);
        int checked = 0;
        for (Field f : MoeParamsDescriptor.class.getDeclaredFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == int.class) {
                Long value = h.get(f.getName());
                assertNotNull(value, "params.cuh does not print " + f.getName());
                assertEquals(value.longValue(), f.getInt(null), f.getName());
                checked++;
            }
        }
        int head = MoeParamsHeaderLayout.check(h, MoeParamsDescriptor.HEAD_OFFSET, "params.cuh");
        assertEquals(h.size() - 26 - head, checked, "every printed offset has a Java twin");
        assertEquals(ElementType.BF16.code(), h.get("DTYPE_BF16"));
        assertEquals(ElementType.FP8_E4M3.code(), h.get("DTYPE_FP8_E4M3"));
        HighThroughputSizing s = MoeConfig.builder().hidden(128).maxTokensPerRank(8).numExperts(20).topK(1)
                .numChannels(3).chunkTokens(1).ringTokens(8).combineWarps(1).build().sizing(4);
        assertEquals(s.dispatchCountWord(1, 2, 3), h.get("DISPATCH_COUNT_1_2_3"));
        assertEquals(s.dispatchTailWord(2, 1), h.get("DISPATCH_TAIL_2_1"));
        assertEquals(s.dispatchCreditWord(1, 3), h.get("DISPATCH_CREDIT_1_3"));
        assertEquals(s.combineTailWord(0, 2), h.get("COMBINE_TAIL_0_2"));
        assertEquals(s.combineCreditWord(2, 3), h.get("COMBINE_CREDIT_2_3"));
        assertEquals(s.directCountWord(1, 2, 3), h.get("DIRECT_COUNT_1_2_3"));
        assertEquals(s.dispatchDoneWord(2), h.get("DISPATCH_DONE_2"));
        assertEquals(s.combineEntryWord(1), h.get("COMBINE_ENTRY_1"));
        assertEquals(s.combineDoneWord(3), h.get("COMBINE_DONE_3"));
        assertEquals(s.dispatchEntryWord(2), h.get("DISPATCH_ENTRY_2"));
        assertEquals(s.signalWords(), h.get("SIGNAL_WORDS"));
        // The layout exchange's words for 3 channels, 4 ranks and 5 local experts (20 experts over 4 ranks)
        assertEquals(s.exchangeFirstRowWord(2, 3), h.get("X_FIRST_ROW_2_3"));
        assertEquals(s.exchangeDestBaseWord(1), h.get("X_DEST_BASE_1"));
        assertEquals(s.exchangeDestRowsWord(1), h.get("X_DEST_ROWS_1"));
        assertEquals(s.exchangeSrcBaseWord(2), h.get("X_SRC_BASE_2"));
        assertEquals(s.exchangeSrcRowsWord(3), h.get("X_SRC_ROWS_3"));
        assertEquals(s.exchangeRecvTotalWord(), h.get("X_RECV_TOTAL"));
        assertEquals(s.exchangeExpertCountWord(4), h.get("X_EXPERT_COUNT_4"));
        assertEquals(s.exchangeWords(), h.get("X_WORDS"));
        assertEquals(s.exchangeBlockBytes(), h.get("X_BLOCK_BYTES"));
        assertEquals(s.exchangeHostBlockBytes(), h.get("X_HOST_BLOCK_BYTES"));
        assertEquals(HighThroughputSizing.DSTATE_DISPATCH_SEQ, h.get("DSTATE_DISPATCH_SEQ"));
        assertEquals(HighThroughputSizing.DSTATE_COMBINE_SEQ, h.get("DSTATE_COMBINE_SEQ"));
        assertEquals(HighThroughputSizing.DIRECT_STATE_WORDS, h.get("DSTATE_WORDS"));
    }
}
