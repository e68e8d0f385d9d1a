package io.gda4j.ibgda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.cuda.PtxModule;
import io.gda4j.world.InlineSlotDescriptor;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The shipped PTX stores and loads the 16-byte inline slot as two 64-bit elements ({@code v2.u64}, system scope),
 * the shape the slot's promise rests on: each 64-bit element of a vector access is single-copy atomic, so a half
 * {data32, seq32} is never torn; a {@code v4.u32} access is four 32-bit accesses and a half could be seen with the
 * data of one message and the sequence of another. Read from the committed PTX resources, no GPU.
 */
@Timeout(60)
class InlineSlotPtxTest {
    static final String SLOT_STORE = "st.relaxed.sys.global.v2.u64";
    static final String SLOT_LOAD = "ld.relaxed.sys.global.v2.u64";
    /** A system-scope load or store to global memory, any shape: in the slot kernels, only slot accesses are. */
    static final Pattern SYS_ACCESS = Pattern.compile("^\\s*((?:st|ld)\\.[a-z0-9_.]*\\bsys\\b[a-z0-9_.]*)\\s");
    static final Pattern FUNCTION = Pattern.compile("^(?:\\.visible\\s+|\\.weak\\s+)?\\.(?:entry|func)\\s+"
            + "(?:\\([^)]*\\)\\s*)?([A-Za-z_$][A-Za-z0-9_$]*)", Pattern.MULTILINE);

    /** The bodies of every .entry and .func of {@code module}, by name. */
    static Map<String, String> functions(String module) {
        String ptx = new String(PtxModule.readPtx(module), StandardCharsets.US_ASCII);
        Map<String, String> bodies = new LinkedHashMap<>();
        Matcher m = FUNCTION.matcher(ptx);
        List<Integer> starts = new ArrayList<>();
        List<String> names = new ArrayList<>();
        while (m.find()) {
            starts.add(m.start());
            names.add(m.group(1));
        }
        for (int i = 0; i < names.size(); i++) {
            int end = i + 1 < names.size() ? starts.get(i + 1) : ptx.length();
            bodies.put(names.get(i), ptx.substring(starts.get(i), end));
        }
        return bodies;
    }

    /** Each system-scope access instruction of {@code body} (opcode with its qualifiers), in order. */
    static List<String> sysAccesses(String body) {
        List<String> found = new ArrayList<>();
        for (String line : body.split("\n")) {
            Matcher m = SYS_ACCESS.matcher(line);
            if (m.find()) {
                found.add(m.group(1));
            }
        }
        return found;
    }

    static String body(String module, String kernel) {
        String body = functions(module).get(kernel);
        assertNotNull(body, module + ".ptx has no kernel " + kernel + ": run device-ptx/regen-ptx.sh");
        return body;
    }

    @Test
    void theSlotIsTwoSixtyFourBitHalves() {
        // What the v2.u64 shape encodes: two 8-byte elements, each a whole {data32, seq32} half.
        assertEquals(16, InlineSlotDescriptor.SIZE);
        assertEquals(8, InlineSlotDescriptor.HI_HALF_OFFSET - InlineSlotDescriptor.LO_HALF_OFFSET);
    }

    @ParameterizedTest(name = "{0}.ptx {1}")
    @CsvSource({
            "ops, gda4j_op_put_inline, store",
            "ops, gda4j_op_inline_stream_send, store",
            "ops, gda4j_op_wait_inline, load",
            "ops, gda4j_op_inline_stream_check, load",
            "bench, gda4j_pingpong_put_inline, both",
            "bench_ibgda, gda4j_pingpong_put_inline, both",
    })
    void slotKernelsAccessTheSlotAsTwoSixtyFourBitElementsAndNothingElseAtSystemScope(String module, String kernel,
                                                                                   String uses) {
        List<String> accesses = sysAccesses(body(module, kernel));
        if (!uses.equals("load")) {
            assertTrue(accesses.contains(SLOT_STORE), () -> module + ".ptx " + kernel + " stores no inline slot with "
                    + SLOT_STORE + " (system-scope accesses found: " + accesses + "); put_inline must store the slot"
                    + " as two 64-bit halves (memory_model.cuh store_slot_relaxed_sys)");
        }
        if (!uses.equals("store")) {
            assertTrue(accesses.contains(SLOT_LOAD), () -> module + ".ptx " + kernel + " loads no inline slot with "
                    + SLOT_LOAD + " (system-scope accesses found: " + accesses + "); wait_inline must load the slot"
                    + " as two 64-bit halves (memory_model.cuh load_slot_relaxed_sys)");
        }
        for (String access : accesses) {
            assertTrue(access.equals(SLOT_STORE) || access.equals(SLOT_LOAD), () -> module + ".ptx " + kernel
                    + " has the system-scope access " + access + "; in an inline-slot kernel each one is a slot"
                    + " access, " + SLOT_STORE + " or " + SLOT_LOAD);
        }
    }

    @ParameterizedTest(name = "{0}.ptx")
    @CsvSource({"ops", "bench", "bench_ibgda", "ibgda", "moe_layout", "moe_ring", "moe_direct", "moe_ll", "proxy", "hostflag", "emulated_nic"})
    void noShippedKernelAccessesSystemScopeMemoryAsThirtyTwoBitVectors(String module) {
        Pattern split = Pattern.compile("\\.v[24]\\.[bsu]32$");
        for (Map.Entry<String, String> f : functions(module).entrySet()) {
            for (String access : sysAccesses(f.getValue())) {
                assertTrue(!split.matcher(access).find(), () -> module + ".ptx " + f.getKey() + ": " + access
                        + " splits a system-scope access into 32-bit elements; an inline slot half would tear");
            }
        }
    }
}
