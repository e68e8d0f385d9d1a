package io.gda4j.ptx;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * No loop whose trip count depends on the lane (its header reads {@code lane}, {@code lane_id()} or
 * {@code threadIdx}) calls a warp or block collective ({@code __shfl*_sync}, {@code __ballot_sync},
 * {@code __syncwarp}, {@code __syncthreads}, ...), directly or through a device function that does. A lane that has
 * left such a loop never joins the collective its neighbours wait in, and the warp hangs: no timeout of ours can end
 * it, the stream never drains, and the host waits forever. The direct dispatch had exactly that: its row loop started
 * at {@code v0 + lane}, so for a part of fewer than 32 vectors (the 16-vector halves of a 4096-byte row's tail) half
 * the lanes skipped the loop and the other half hung in {@code __shfl_sync}, on every GPU run of those shapes. Only a
 * GPU shows the hang, and CI has none: this reads the sources instead. The fix is always the same: loop over a base
 * every lane shares and guard the lane's own work inside.
 */
class WarpConvergenceTest {
    private static final List<Path> SOURCES = List.of(Path.of("kernels"), Path.of("include"),
            Path.of("..", "samples", "kernels"));
    private static final Pattern COLLECTIVE = Pattern.compile(
            "\\b__(?:shfl(?:_up|_down|_xor)?|ballot|any|all|uni|match_any|match_all|reduce_\\w+)_sync\\s*\\("
                    + "|\\b__syncwarp\\s*\\(|\\b__syncthreads\\w*\\s*\\(|\\bbar(?:rier)?\\.sync\\b");
    private static final Pattern LANE_DEPENDENT = Pattern.compile("\\blane\\b|\\blane_id\\s*\\(|\\bthreadIdx\\b");
    private static final Pattern LOOP = Pattern.compile("\\b(for|while)\\s*\\(");
    private static final Pattern SCOPED = Pattern.compile("^(?:warp|block)_|_(?:warp|block)$");
    private static final Pattern FUNCTION = Pattern.compile(
            "__(?:device|global)__[^;{}()]*?\\b(\\w+)\\s*\\(");

    @Test
    void noLoopWhoseTripsDependOnTheLaneCallsACollective() throws IOException {
        Map<String, String> files = sources();
        assertTrue(files.keySet().stream().anyMatch(f -> f.endsWith("moe_direct.cu")), "the kernels were read: " + files.keySet());
        assertEquals(List.of(), violations(files), "loops whose lanes can leave early around a warp or block collective");
    }

    @Test
    void theCheckFindsALaneBoundedLoopAroundAShuffleAndThroughAHelper() {
        String direct = "__device__ void f(int v1) { const int lane = threadIdx.x % 32;\n"
                + "  for (int i = lane; i < v1; i += 32) { int x = __shfl_sync(0xffffffffu, i, 0); }\n}\n";
        assertEquals(1, violations(Map.of("direct.cu", direct)).size(), direct);
        String helper = "__device__ __forceinline__ int bcast_warp(int v) { return __shfl_sync(0xffffffffu, v, 0); }\n"
                + "__device__ void g(int n) { for (int i = threadIdx.x; i < n; i += blockDim.x) { bcast_warp(i); } }\n";
        assertEquals(1, violations(Map.of("helper.cu", helper)).size(), helper);
        String barrier = "__global__ void k(int n) { while (threadIdx.x < n) { __syncthreads(); n--; } }\n";
        assertEquals(1, violations(Map.of("barrier.cu", barrier)).size(), barrier);
        // The fixed form: every lane takes the same trips, the lane's work is guarded inside.
        String fixed = "__device__ void f(int v0, int v1) { const int lane = threadIdx.x % 32;\n"
                + "  for (int base = v0; base < v1; base += 32) { const int i = base + lane;\n"
                + "    int x = __shfl_sync(0xffffffffu, i, 0); if (i < v1) { } } }\n";
        assertEquals(List.of(), violations(Map.of("fixed.cu", fixed)), fixed);
    }

    /** Each file's text without comments, by path; the samples' kernels where the checkout has them. */
    static Map<String, String> sources() throws IOException {
        Map<String, String> files = new LinkedHashMap<>();
        for (Path root : SOURCES) {
            if (!Files.isDirectory(root)) {
                continue;
            }
            try (Stream<Path> walk = Files.walk(root)) {
                for (Path p : walk.filter(f -> f.toString().endsWith(".cu") || f.toString().endsWith(".cuh"))
                        .sorted().toList()) {
                    files.put(p.toString(), Files.readString(p, StandardCharsets.UTF_8));
                }
            }
        }
        return files;
    }

    /** "file:line: loop" for each lane-bounded loop whose body reaches a collective. */
    static List<String> violations(Map<String, String> files) {
        Map<String, String> code = new LinkedHashMap<>();
        // Comments out, newlines kept (line numbers hold); strings stay, and device code has few.
        files.forEach((f, text) -> code.put(f, TransportFoldersTest.code(text)));
        Set<String> collectiveFunctions = collectiveFunctions(code.values());
        List<String> found = new ArrayList<>();
        code.forEach((file, text) -> {
            Matcher m = LOOP.matcher(text);
            while (m.find()) {
                int open = m.end() - 1;
                int close = matching(text, open, '(', ')');
                if (close < 0) {
                    continue;
                }
                String header = text.substring(open + 1, close);
                if (!LANE_DEPENDENT.matcher(header).find()) {
                    continue;
                }
                String body = body(text, close + 1);
                String reached = reaches(body, collectiveFunctions);
                if (reached != null) {
                    int line = (int) text.substring(0, m.start()).chars().filter(c -> c == '\n').count() + 1;
                    found.add(file + ":" + line + ": " + m.group(1) + " (" + header.strip() + ") reaches " + reached);
                }
            }
        });
        return found;
    }

    /**
     * The device functions of a warp or block (named so: {@code warp_*}, {@code block_*}, {@code *_warp},
     * {@code *_block}) that call a collective, directly or through each other (to a fixpoint). Only those: a thread's
     * function such as {@code signal} reaches a collective only in the branch of a wider scope, which a reading of the
     * text cannot tell from the thread's branch.
     */
    private static Set<String> collectiveFunctions(Iterable<String> texts) {
        Map<String, String> bodies = new LinkedHashMap<>();
        for (String text : texts) {
            Matcher m = FUNCTION.matcher(text);
            while (m.find()) {
                int open = m.end() - 1;
                int close = matching(text, open, '(', ')');
                if (close < 0) {
                    continue;
                }
                int brace = close + 1;
                while (brace < text.length() && text.charAt(brace) != '{' && text.charAt(brace) != ';') {
                    brace++;
                }
                if (brace < text.length() && text.charAt(brace) == '{') {
                    bodies.merge(m.group(1), body(text, brace), (a, b) -> a + "\n" + b);
                }
            }
        }
        Set<String> calling = new TreeSet<>();
        boolean grew = true;
        while (grew) {
            grew = false;
            for (Map.Entry<String, String> e : bodies.entrySet()) {
                if (SCOPED.matcher(e.getKey()).find() && !calling.contains(e.getKey())
                        && reaches(e.getValue(), calling) != null) {
                    calling.add(e.getKey());
                    grew = true;
                }
            }
        }
        return calling;
    }

    /** The collective or collective-calling function {@code body} calls first, else null. */
    private static String reaches(String body, Set<String> functions) {
        Matcher c = COLLECTIVE.matcher(body);
        if (c.find()) {
            return c.group().replaceAll("\\s*\\($", "");
        }
        for (String f : functions) {
            if (Pattern.compile("\\b" + Pattern.quote(f) + "\\s*[(<]").matcher(body).find()) {
                return f;
            }
        }
        return null;
    }

    /** A loop's or function's body from {@code from}: a braced block, else the one statement up to its ';'. */
    private static String body(String text, int from) {
        int i = from;
        while (i < text.length() && Character.isWhitespace(text.charAt(i))) {
            i++;
        }
        if (i < text.length() && text.charAt(i) == '{') {
            int close = matching(text, i, '{', '}');
            return text.substring(i, close < 0 ? text.length() : close + 1);
        }
        int semi = text.indexOf(';', i);
        return text.substring(i, semi < 0 ? text.length() : semi + 1);
    }

    private static int matching(String text, int open, char up, char down) {
        int depth = 0;
        for (int i = open; i < text.length(); i++) {
            char ch = text.charAt(i);
            if (ch == up) {
                depth++;
            } else if (ch == down && --depth == 0) {
                return i;
            }
        }
        return -1;
    }
}
