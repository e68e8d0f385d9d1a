package io.gda4j.ptx;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The device library names a transport only in its own folder and in the table: outside {@code transport/<name>/},
 * {@code transports.def} and the registry {@code transport/backends.cuh}, no code and no string of
 * {@code include/gda4j} contains a transport's name (comments may explain them), so a new transport is a row and a
 * folder, and the dispatcher reaches it through the table. The world's headers ({@code gda4j.cuh}, {@code layout/},
 * {@code core/}, {@code detail/}) name no MoE either. The toolkit's kernels ({@code kernels/*.cu}) are applications
 * of the library and may name what they test.
 */
class TransportFoldersTest {
    static final Path ROOT = Path.of("include", "gda4j");
    private static final Pattern ROW = Pattern.compile("^GDA4J_TRANSPORT\\(\\s*(\\w+)\\s*,\\s*(\\w+)\\s*,", Pattern.MULTILINE);
    private static final Pattern MOE = Pattern.compile("(?i)(?<![a-z])moe(?![a-z])");

    /** The names (as users type them) of the rows of transports.def, in its order. */
    static List<String> rows() {
        try {
            Matcher m = ROW.matcher(Files.readString(ROOT.resolve("transports.def"), StandardCharsets.UTF_8));
            List<String> names = new ArrayList<>();
            while (m.find()) {
                assertEquals(m.group(1), m.group(2).toUpperCase(Locale.ROOT), "a row's two spellings of its name");
                names.add(m.group(2));
            }
            return names;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The rows with device code of their own: those with a folder {@code transport/<name>/}. */
    static List<String> rowsWithFolders() {
        return rows().stream().filter(n -> Files.isDirectory(ROOT.resolve("transport").resolve(n))).toList();
    }

    /** {@code text} without its comments ({@code //} and block comments); strings and code stay. */
    static String code(String text) {
        StringBuilder b = new StringBuilder();
        int i = 0;
        while (i < text.length()) {
            if (text.startsWith("//", i)) {
                while (i < text.length() && text.charAt(i) != '\n') {
                    i++;
                }
            } else if (text.startsWith("/*", i)) {
                int end = text.indexOf("*/", i + 2);
                String inside = text.substring(i, end < 0 ? text.length() : end + 2);
                b.append("\n".repeat((int) inside.chars().filter(c -> c == '\n').count()));
                i = end < 0 ? text.length() : end + 2;
            } else if (text.charAt(i) == '"') {
                int j = i + 1;
                while (j < text.length() && text.charAt(j) != '"') {
                    j += text.charAt(j) == '\\' ? 2 : 1;
                }
                b.append(text, i, Math.min(j + 1, text.length()));
                i = j + 1;
            } else {
                b.append(text.charAt(i++));
            }
        }
        return b.toString();
    }

    /** The transports (of {@code names}) that a line of code names: any identifier or string holding a name. */
    static List<String> named(String codeLine, List<String> names) {
        String lower = codeLine.toLowerCase(Locale.ROOT);
        return names.stream().filter(lower::contains).toList();
    }

    /** Where {@code name} may be named: its folder, the table and the registry. */
    static boolean mayName(String header, String name) {
        return header.startsWith("transport/" + name + "/") || header.equals("transports.def")
                || header.equals("transport/backends.cuh");
    }

    static List<String> headers() throws IOException {
        try (Stream<Path> s = Files.walk(ROOT)) {
            return s.filter(f -> f.toString().endsWith(".cuh") || f.toString().endsWith(".def"))
                    .map(f -> ROOT.relativize(f).toString().replace('\\', '/')).sorted().toList();
        }
    }

    @Test
    void everyTransportWithDeviceCodeHasAFolderAndARegistration() throws IOException {
        List<String> rows = rows();
        assertTrue(rows.size() >= 5 && rows.get(0).equals("none") && rows.get(1).equals("self"), rows.toString());
        List<String> folders;
        try (Stream<Path> s = Files.list(ROOT.resolve("transport"))) {
            folders = s.filter(Files::isDirectory).map(f -> f.getFileName().toString()).sorted().toList();
        }
        List<String> rowsNotTheWorlds = rows.subList(2, rows.size()).stream().sorted().toList();
        assertEquals(rowsNotTheWorlds, folders, "one folder under transport/ per row of transports.def but none and"
                + " self (the world's)");
        String registry = Files.readString(ROOT.resolve("transport/backends.cuh"), StandardCharsets.UTF_8);
        for (String f : folders) {
            assertTrue(registry.contains("#include \"" + f + "/" + f + ".cuh\""), "transport/backends.cuh includes "
                    + f + "/" + f + ".cuh");
        }
    }

    @Test
    void aTransportIsNamedOnlyInItsFolderAndTheTable() throws IOException {
        List<String> names = rowsWithFolders();
        List<String> wrong = new ArrayList<>();
        for (String h : headers()) {
            String[] lines = code(Files.readString(ROOT.resolve(h), StandardCharsets.UTF_8)).split("\n", -1);
            for (int i = 0; i < lines.length; i++) {
                for (String n : named(lines[i], names)) {
                    if (!mayName(h, n)) {
                        wrong.add(h + ":" + (i + 1) + " names " + n + ": " + lines[i].trim());
                    }
                }
            }
        }
        assertEquals(List.of(), wrong, "a transport named outside transport/<name>/ and transports.def; ask the"
                + " peer's capabilities (CAP_*) or add a call to core/backend.cuh that its back end implements");
    }

    @Test
    void theWorldsHeadersNameNoMoe() throws IOException {
        List<String> wrong = new ArrayList<>();
        for (String h : headers()) {
            if (h.startsWith("moe/") || h.startsWith("transport/") || h.equals("transports.def")) {
                continue;
            }
            String[] lines = code(Files.readString(ROOT.resolve(h), StandardCharsets.UTF_8)).split("\n", -1);
            for (int i = 0; i < lines.length; i++) {
                if (MOE.matcher(lines[i]).find()) {
                    wrong.add(h + ":" + (i + 1) + ": " + lines[i].trim());
                }
            }
        }
        assertEquals(List.of(), wrong, "the MoE named below it; its codes and names live in moe/");
    }

    /** The rules catch what they claim to: a dispatcher's branch on a code, a back end's name, a string. */
    @Test
    void theRulesCanFail() {
        List<String> names = List.of("p2p", "proxy", "ibgda");
        assertEquals(List.of("proxy"), named("  if (p.transport == TRANSPORT_PROXY) return proxy::put(p);", names));
        assertEquals(List.of("ibgda"), named("  return detail::ibgda_quiet_all(me.view);", names));
        assertEquals(List.of("p2p"), named("  const char* why = \"over p2p\";", names));
        assertEquals(List.of(), named(code("  fence_acq_rel_sys();  // as over the proxy"), names));
        assertEquals(List.of(), named(code("/* ibgda\n proxy */ int x;"), names));
        assertTrue(mayName("transport/proxy/fifo.cuh", "proxy") && !mayName("detail/dispatch.cuh", "proxy")
                && !mayName("transport/ibgda/ibgda.cuh", "proxy"));
        assertTrue(MOE.matcher("constexpr uint32_t ERROR_MOE_X = 17;").find()
                && MOE.matcher("gda4j_moe_dispatch").find() && !MOE.matcher("someone").find());
        assertEquals(new TreeSet<>(List.of("ibgda", "p2p", "proxy")), new TreeSet<>(rowsWithFolders()));
    }
}
