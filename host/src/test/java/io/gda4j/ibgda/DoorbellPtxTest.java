package io.gda4j.ibgda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The shipped PTX rings the doorbell as {@code transport/ibgda/qp.cuh}'s {@code ring} says, in every module that posts WQEs: in
 * the one function that stores to a doorbell, the doorbell record's release store ({@code st.release.sys.b32}), then
 * a system fence ({@code membar.sys}, what {@code __threadfence_system} compiles to, or {@code fence.sc.sys}), then
 * exactly one {@code st.mmio} doorbell, with nothing stored at system scope in between. {@link IbgdaQpHostTest} holds
 * the header's source to the protocol; this holds the PTX nvcc made of it (and the asm of {@code layout/mlx5.cuh}),
 * read from the committed resources, no GPU.
 */
class DoorbellPtxTest {
    static final String RECORD = "st.release.sys.b32";
    static final String DOORBELL_PREFIX = "st.mmio.";
    /** System-scope stores and fences, in order. */
    static final Pattern ORDERED = Pattern.compile("^\\s*((?:st|red|atom)\\.[a-z0-9_.]*\\bsys\\b[a-z0-9_.]*"
            + "|st\\.mmio\\.[a-z0-9_.]*|membar\\.sys|fence\\.sc\\.sys|fence\\.acq_rel\\.sys)\\s*[\\[;]");

    static List<String> ordered(String body) {
        List<String> found = new ArrayList<>();
        for (String line : body.split("\n")) {
            Matcher m = ORDERED.matcher(line);
            if (m.find()) {
                found.add(m.group(1));
            }
        }
        return found;
    }

    @ParameterizedTest(name = "{0}.ptx")
    @CsvSource({"ibgda", "bench_ibgda", "ops", "moe_direct", "moe_ring", "moe_ll"})
    void theDoorbellFollowsItsRecordAndASystemFence(String module) {
        List<String> ringers = new ArrayList<>();
        for (Map.Entry<String, String> f : InlineSlotPtxTest.functions(module).entrySet()) {
            List<String> seq = ordered(f.getValue());
            long doorbells = seq.stream().filter(s -> s.startsWith(DOORBELL_PREFIX)).count();
            if (doorbells == 0) {
                continue;
            }
            ringers.add(f.getKey());
            assertEquals(1, doorbells, () -> module + ".ptx " + f.getKey() + " stores " + doorbells + " doorbells ("
                    + seq + "); ring stores exactly one, after the doorbell record");
            int at = seq.indexOf(seq.stream().filter(s -> s.startsWith(DOORBELL_PREFIX)).findFirst().orElseThrow());
            assertTrue(at >= 2 && seq.get(at - 2).equals(RECORD)
                    && (seq.get(at - 1).equals("membar.sys") || seq.get(at - 1).equals("fence.sc.sys")), () -> module
                    + ".ptx " + f.getKey() + ": the system-scope stores and fences before the doorbell are " + seq
                    + "; the doorbell must come right after " + RECORD + " (the doorbell record) and a system fence");
        }
        assertEquals(1, ringers.size(), () -> module + ".ptx: the doorbell should be stored by one function"
                + " (ibgda::ring), found " + ringers + ": run device-ptx/regen-ptx.sh");
    }
}
