package io.gda4j.moe.core;

import io.gda4j.moe.MoeConfig;
import io.gda4j.moe.tensor.ElementType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Both configs refuse a bad shape with the same words, each naming itself and its own field. */
class MoeShapeTest {
    @ParameterizedTest(name = "hidden {0}, tokens {1}, experts {2}, top-{3}")
    @CsvSource({
        "0, 128, 256, 8, hidden must be > 0, got 0",
        "7000, 128, 256, 8, hidden must be a multiple of 128",
        "7168, 0, 256, 8, maxTokensPerRank must be > 0, got 0",
        "7168, 128, 0, 8, numExperts must be > 0, got 0",
        "7168, 128, 4, 5, topK must be in 1..4",
        "7168, 128, 256, 33, topK must be in 1..32",
    })
    void bothConfigsRefuseABadShapeAlike(int hidden, int tokens, int experts, int topK, String words) {
        String ht = assertThrows(IllegalArgumentException.class, () -> MoeConfig.builder().hidden(hidden)
                .maxTokensPerRank(tokens).numExperts(experts).topK(topK).build()).getMessage();
        String ll = assertThrows(IllegalArgumentException.class, () -> MoeConfig.lowLatencyBuilder().hidden(hidden)
                .lowLatency(tokens, ElementType.BF16).numExperts(experts).topK(topK).build()).getMessage();
        assertTrue(ht.startsWith("MoeConfig " + words), ht);
        assertTrue(ll.startsWith("MoeConfig lowLatency " + words), ll);
        assertEquals(ht.substring("MoeConfig ".length()), ll.substring("MoeConfig lowLatency ".length()));
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = ElementType.class, names = {"BF16", "FP8_E4M3"}, mode = EnumSource.Mode.EXCLUDE)
    void eachNamesItsOwnTypeField(ElementType type) {
        String ht = assertThrows(IllegalArgumentException.class, () -> MoeConfig.deepEpBuilder().dtype(type).build())
                .getMessage();
        String ll = assertThrows(IllegalArgumentException.class,
                () -> MoeConfig.deepEpLowLatencyBuilder().lowLatency(128, type).build()).getMessage();
        assertEquals("MoeConfig dtype must be BF16 or FP8_E4M3, got " + type, ht);
        assertEquals("MoeConfig lowLatency dispatchType must be BF16 or FP8_E4M3, got " + type, ll);
    }
}
