package io.gda4j.ptx;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The device headers keep their layers, as LayeringTest (gda4j-checks) keeps the Java packages: a header includes
 * only headers of a lower layer, or of its own directory (a transport only its own folder), and the includes form no
 * cycle. Bottom to top: {@code layout/} (bytes shared with the host, plain C++), {@code core/},
 * {@code transport/<name>/} (one folder per transport; {@code transport/backends.cuh} lists them), {@code detail/},
 * the public {@code gda4j.cuh}, and {@code moe/} on top of the public API. The table {@code transports.def} is data
 * below every layer: any header may read it (it is not a {@code .cuh}, so the include graph leaves it out). A user's
 * kernel includes {@code gda4j.cuh}.
 */
class DeviceHeaderLayersTest {
    private static final Path ROOT = Path.of("include", "gda4j");
    private static final List<String> LAYERS = List.of("layout", "core", "transport", "detail", "", "moe");
    private static final Pattern INCLUDE = Pattern.compile("^\\s*#\\s*include\\s+[\"<]([^\">]+)[\">]", Pattern.MULTILINE);

    /** Every header under include/gda4j, by its path from there, with the headers it includes (same form). */
    static Map<String, List<String>> includes() throws IOException {
        Map<String, List<String>> graph = new TreeMap<>();
        try (Stream<Path> files = Files.walk(ROOT)) {
            for (Path p : files.filter(f -> f.toString().endsWith(".cuh")).toList()) {
                String name = ROOT.relativize(p).toString().replace('\\', '/');
                List<String> deps = new ArrayList<>();
                Matcher m = INCLUDE.matcher(Files.readString(p, StandardCharsets.UTF_8));
                while (m.find()) {
                    String target = m.group(1);
                    if (target.startsWith("gda4j/")) {
                        deps.add(target.substring("gda4j/".length()));
                    } else if (target.endsWith(".cuh")) {
                        Path resolved = ROOT.relativize(p.getParent().resolve(target).normalize());
                        deps.add(resolved.toString().replace('\\', '/'));
                    }
                }
                graph.put(name, deps);
            }
        }
        return graph;
    }

    static String dir(String header) {
        int slash = header.lastIndexOf('/');
        return slash < 0 ? "" : header.substring(0, slash);
    }

    /** The layer of a directory: a transport's folder {@code transport/<name>} is in the transport layer. */
    static String layer(String dir) {
        return dir.startsWith("transport/") ? "transport" : dir;
    }

    /** Why {@code from} may not include {@code to}, or null when it may. */
    static String wrongArrow(String from, String to) {
        String a = dir(from);
        String b = dir(to);
        int la = LAYERS.indexOf(layer(a));
        int lb = LAYERS.indexOf(layer(b));
        if (la < 0 || lb < 0) {
            return "a header outside the known layers " + LAYERS;
        }
        if (la > lb) {
            return null;
        }
        if (la < lb) {
            return "an upward include (" + (a.isEmpty() ? "gda4j.cuh" : a + "/") + " below "
                    + (b.isEmpty() ? "gda4j.cuh" : b + "/") + ")";
        }
        if (layer(a).equals("transport")) {
            // A transport's folder includes only itself; transport/backends.cuh, the registry, includes each folder.
            return a.equals(b) || (a.equals("transport") && from.equals("transport/backends.cuh")) ? null
                    : "one transport including another";
        }
        return null;
    }

    @Test
    void everyIncludePointsDownOrWithinItsOwnPart() throws IOException {
        Map<String, List<String>> graph = includes();
        assertTrue(graph.containsKey("gda4j.cuh") && graph.size() > 10, "headers found: " + graph.keySet());
        List<String> wrong = new ArrayList<>();
        graph.forEach((from, deps) -> {
            for (String to : deps) {
                assertTrue(graph.containsKey(to), from + " includes " + to + ", which does not exist");
                String why = wrongArrow(from, to);
                if (why != null) {
                    wrong.add(from + " -> " + to + ": " + why);
                }
            }
        });
        assertEquals(List.of(), wrong);
    }

    @Test
    void theIncludesFormNoCycle() throws IOException {
        Map<String, List<String>> graph = includes();
        Map<String, Integer> state = new TreeMap<>();   // 1: on the path, 2: done
        for (String h : graph.keySet()) {
            List<String> path = new ArrayList<>();
            String cycle = visit(h, graph, state, path);
            assertEquals(null, cycle, "an include cycle");
        }
    }

    private static String visit(String h, Map<String, List<String>> graph, Map<String, Integer> state,
                                List<String> path) {
        Integer s = state.get(h);
        if (s != null) {
            return s == 1 ? String.join(" -> ", path) + " -> " + h : null;
        }
        state.put(h, 1);
        path.add(h);
        for (String to : graph.getOrDefault(h, List.of())) {
            String cycle = visit(to, graph, state, path);
            if (cycle != null) {
                return cycle;
            }
        }
        path.remove(path.size() - 1);
        state.put(h, 2);
        return null;
    }

    @Test
    void layoutHeadersIncludeNoOtherLayer() throws IOException {
        includes().forEach((from, deps) -> {
            if (dir(from).equals("layout")) {
                for (String to : deps) {
                    assertEquals("layout", dir(to), from + " is shared with the host (plain C++) but includes " + to);
                }
            }
        });
    }

    /** The internal names a line uses ({@code detail::}, {@code proxy::}, {@code ibgda::}, ...), outside comments. */
    static List<String> internalNames(String line) {
        String code = line.contains("//") ? line.substring(0, line.indexOf("//")) : line;
        List<String> names = new ArrayList<>();
        Matcher m = INTERNAL.matcher(code);
        while (m.find()) {
            names.add(m.group());
        }
        return names;
    }

    /** detail:: and each transport's namespace (the rows of transports.def with a folder). */
    private static final Pattern INTERNAL = Pattern.compile("\\b(detail|"
            + String.join("|", TransportFoldersTest.rowsWithFolders()) + ")::\\w+");

    /**
     * The MoE device code (moe/ and the kernels/moe*.cu that use it) is written against the public API: it names no
     * internal of the layers below, so a transport can change behind the API without the MoE kernels knowing.
     */
    @Test
    void theMoeDeviceCodeUsesOnlyThePublicApi() throws IOException {
        List<Path> files = new ArrayList<>();
        try (Stream<Path> s = Files.list(ROOT.resolve("moe"))) {
            s.filter(f -> f.toString().endsWith(".cuh")).forEach(files::add);
        }
        try (Stream<Path> s = Files.list(Path.of("kernels"))) {
            s.filter(f -> f.getFileName().toString().startsWith("moe") && f.toString().endsWith(".cu"))
                    .forEach(files::add);
        }
        assertTrue(files.size() >= 4, "MoE sources found: " + files);
        List<String> wrong = new ArrayList<>();
        for (Path f : files) {
            List<String> lines = Files.readAllLines(f, StandardCharsets.UTF_8);
            for (int i = 0; i < lines.size(); i++) {
                for (String name : internalNames(lines.get(i))) {
                    wrong.add(f + ":" + (i + 1) + " " + name);
                }
            }
        }
        assertEquals(List.of(), wrong, "internal names in the MoE device code; add what it needs to gda4j.cuh");
    }

    /** A comparison of the clock's reach with a timeout, outside comments: {@code x > timeout_ns}, {@code timeout_ns < x}. */
    static boolean timesItself(String line) {
        String code = line.contains("//") ? line.substring(0, line.indexOf("//")) : line;
        return OWN_TIMEOUT.matcher(code).find();
    }

    private static final Pattern OWN_TIMEOUT = Pattern.compile("(?<!-)[<>]=?\\s*(?:[\\w.]+->)*[\\w.]*timeout_ns\\b|\\btimeout_ns\\s*[<>]");

    /**
     * One deadline policy for every device-side wait (core/deadline.cuh): no other header or kernel compares a clock
     * with a timeout itself; they hand the timeout to look().
     */
    @Test
    void everyWaitGivesUpThroughTheOneDeadline() throws IOException {
        List<Path> files = new ArrayList<>();
        for (Path dir : List.of(ROOT, Path.of("kernels"))) {
            try (Stream<Path> s = Files.walk(dir)) {
                s.filter(f -> f.toString().endsWith(".cuh") || f.toString().endsWith(".cu")).forEach(files::add);
            }
        }
        assertTrue(files.size() > 20, "device sources found: " + files);
        List<String> wrong = new ArrayList<>();
        for (Path f : files) {
            if (f.endsWith(Path.of("core", "deadline.cuh"))) {
                continue;
            }
            List<String> lines = Files.readAllLines(f, StandardCharsets.UTF_8);
            for (int i = 0; i < lines.size(); i++) {
                if (timesItself(lines.get(i))) {
                    wrong.add(f + ":" + (i + 1) + " " + lines.get(i).trim());
                }
            }
        }
        assertEquals(List.of(), wrong, "waits that keep their own deadline; use look() of core/deadline.cuh");
    }

    /** The rules catch what they claim to: an upward arrow, a transport reaching into another, and a cycle. */
    @Test
    void theRulesCanFail() {
        assertFalse(wrongArrow("core/errors.cuh", "transport/p2p/p2p.cuh") == null, "core -> transport");
        assertFalse(wrongArrow("layout/view.cuh", "core/handles.cuh") == null, "layout -> core");
        assertFalse(wrongArrow("transport/p2p/p2p.cuh", "transport/proxy/proxy.cuh") == null, "p2p -> proxy");
        assertFalse(wrongArrow("transport/proxy/proxy.cuh", "transport/backends.cuh") == null, "proxy -> registry");
        assertFalse(wrongArrow("gda4j.cuh", "moe/moe.cuh") == null, "gda4j.cuh -> moe");
        assertEquals(null, wrongArrow("transport/ibgda/ibgda.cuh", "transport/ibgda/qp.cuh"), "ibgda -> its QP part");
        assertEquals(null, wrongArrow("transport/backends.cuh", "transport/ibgda/ibgda.cuh"), "the registry");
        assertEquals(null, wrongArrow("detail/dispatch.cuh", "transport/backends.cuh"), "dispatcher -> registry");
        assertEquals(null, wrongArrow("moe/moe.cuh", "gda4j.cuh"), "moe -> the public API");
        Map<String, List<String>> looped = Map.of("a.cuh", List.of("b.cuh"), "b.cuh", List.of("a.cuh"));
        assertFalse(visit("a.cuh", looped, new TreeMap<>(), new ArrayList<>()) == null, "a two-header cycle");
        assertEquals(List.of("detail::lane_id", "ibgda::signal"),
                internalNames("  x = detail::lane_id() + ibgda::signal(q);  // gda4j::detail::poll"));
        assertEquals(List.of(), internalNames("  put_warp(peer, dst, src, bytes);  // not detail::copy"));
        assertTrue(timesItself("    if (elapsed > v->timeout_ns) {"));
        assertTrue(timesItself("  while (global_timer_ns() - start < timeout_ns) __nanosleep(128);"));
        assertTrue(timesItself("  return d->elapsed > timeout_ns ? ERR_TIMEOUT : OK;"));
        assertTrue(timesItself("      if (gda4j::global_timer_ns() - since > lock_timeout_ns) {"));
        assertFalse(timesItself("  l.timeout_ns = v->timeout_ns;"));
        assertFalse(timesItself("  st = look(me.abort_flag, me.timeout_ns, &d);  // gives up once elapsed > timeout_ns"));
    }
}
