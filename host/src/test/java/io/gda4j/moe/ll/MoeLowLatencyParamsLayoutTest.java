package io.gda4j.moe.ll;

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

/**
 * MoeLowLatencyParamsDescriptor against gda4j/moe/ll_params.cuh field by field, its header too, and the signal words.
 */
class MoeLowLatencyParamsLayoutTest {
    @Test
    void javaAndCudaAgree(@TempDir Path dir) throws Exception {
        Map<String, Long> h = HeaderValues.of("ll_params.cpp", dir);
        int checked = 0;
        for (Field f : MoeLowLatencyParamsDescriptor.class.getDeclaredFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == int.class) {
                Long value = h.get(f.getName());
                assertNotNull(value, "ll_params.cuh does not print " + f.getName());
                assertEquals(value.longValue(), f.getInt(null), f.getName());
                checked++;
            }
        }
        int head = MoeParamsHeaderLayout.check(h, MoeLowLatencyParamsDescriptor.HEAD_OFFSET, "ll_params.cuh");
        assertEquals(h.size() - 12 - head, checked, "every printed offset has a Java twin");
        assertEquals(LowLatencySizing.GATHERED_ROWS, h.get("LL_GATHERED_ROWS"));
        assertEquals(LowLatencySizing.SRC_INTS, h.get("LL_SRC_INTS"));
        assertEquals(LowLatencySizing.MSG_HEADER_BYTES, h.get("LL_MSG_HEADER_BYTES"));
        LowLatencySizing s = MoeConfig.lowLatencyBuilder().hidden(128).lowLatency(4, ElementType.BF16).numExperts(12)
                .topK(2).build().lowLatencySizing(4);
        assertEquals(s.dispatchCountWord(1, 2, 3), h.get("DISPATCH_COUNT_1_2_3"));
        assertEquals(s.combineFlagWord(1, 7), h.get("COMBINE_FLAG_1_7"));
        assertEquals(s.dispatchBatchWord(1, 2), h.get("DISPATCH_BATCH_1_2"));
        assertEquals(s.combineBatchWord(1, 3), h.get("COMBINE_BATCH_1_3"));
        assertEquals(s.combineRankFlagWord(1, 3), h.get("COMBINE_RANK_FLAG_1_3"));
        for (int[] c : new int[][] {{36, 288}, {37, 288}, {128, 288}, {5, 0}}) {
            assertEquals(LowLatencySizing.tableMsgs(c[0], c[1]), h.get("TABLE_MSGS_" + c[0] + "_" + c[1]),
                    "count table slots for " + c[0] + " experts and " + c[1] + "-byte messages");
        }
    }
}
