package io.gda4j.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every {@code ```java} block of README.md compiles against the modules, as a reader would paste it: the block's own
 * {@code import} lines, then statements. A block may begin with {@code // given: Type name, Type name} lines, which
 * say what it takes from the surrounding code; they become the parameters of the method the statements are put in.
 */
class ReadmeSnippetsTest {
    private static final String GIVEN = "// given:";

    /** One block: where it starts in README.md (1-based line of its first code line), and its lines. */
    record Snippet(int firstLine, List<String> lines) {
    }

    static Path readme() {
        // Surefire runs in the module's directory; the README is the repository's.
        Path p = Path.of("").toAbsolutePath();
        for (Path d = p; d != null; d = d.getParent()) {
            if (Files.isRegularFile(d.resolve("README.md")) && Files.isDirectory(d.resolve("samples"))) {
                return d.resolve("README.md");
            }
        }
        throw new IllegalStateException("no README.md above " + p);
    }

    static List<Snippet> javaBlocks(List<String> readme) {
        List<Snippet> blocks = new ArrayList<>();
        for (int i = 0; i < readme.size(); i++) {
            if (readme.get(i).strip().equals("```java")) {
                int start = i + 1;
                int end = start;
                while (end < readme.size() && !readme.get(end).strip().startsWith("```")) {
                    end++;
                }
                blocks.add(new Snippet(start + 1, readme.subList(start, end)));
                i = end;
            }
        }
        return blocks;
    }

    /** Import lines of a block: the wrapped source has them, then two header lines, then the block line for line. */
    static int imports(Snippet s) {
        return (int) s.lines().stream().filter(l -> l.strip().startsWith("import ")).count();
    }

    /** The README line of line {@code wrappedLine} (1-based) of {@code wrap(s, ..)}. */
    static long readmeLine(Snippet s, long wrappedLine) {
        return s.firstLine() + wrappedLine - imports(s) - 3;
    }

    /** The compilation unit of block {@code index}: its imports, a class and method header, then its lines. */
    static String wrap(Snippet s, int index) {
        StringBuilder imports = new StringBuilder();
        StringBuilder params = new StringBuilder();
        StringBuilder body = new StringBuilder();
        for (String line : s.lines()) {
            String t = line.strip();
            if (t.startsWith("import ")) {
                imports.append(line).append('\n');
                body.append('\n');
            } else if (t.startsWith(GIVEN)) {
                String given = t.substring(GIVEN.length()).strip();
                int comment = given.indexOf("//");
                given = (comment >= 0 ? given.substring(0, comment) : given).strip();
                if (params.length() > 0 && !given.isEmpty()) {
                    params.append(", ");
                }
                params.append(given);
                body.append('\n');
            } else {
                body.append(line).append('\n');
            }
        }
        return imports + "class ReadmeSnippet" + index + " {\n void snippet(" + params + ") throws Exception {\n"
                + body + " }\n}\n";
    }

    @Test
    void everyJavaBlockOfTheReadmeCompilesWithTheImportsItShows(@TempDir Path out) throws IOException {
        List<String> readme = Files.readAllLines(readme(), StandardCharsets.UTF_8);
        List<Snippet> blocks = javaBlocks(readme);
        assertTrue(blocks.size() >= 4, "README.md's java blocks: " + blocks.size());
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertTrue(javac != null, "a JDK's compiler (javax.tools) is needed, not a JRE");
        List<String> failures = new ArrayList<>();
        for (int i = 0; i < blocks.size(); i++) {
            Snippet s = blocks.get(i);
            String source = wrap(s, i);
            DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
            JavaFileObject file = new SimpleJavaFileObject(URI.create("string:///ReadmeSnippet" + i + ".java"),
                    JavaFileObject.Kind.SOURCE) {
                @Override
                public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                    return source;
                }
            };
            Boolean ok = javac.getTask(null, null, diagnostics,
                    List.of("-classpath", TestClassPath.get(), "-d", out.toString(), "-proc:none", "-Xlint:all"),
                    null, List.of(file)).call();
            List<String> found = new ArrayList<>();
            for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
                if (d.getKind() == Diagnostic.Kind.ERROR || d.getKind() == Diagnostic.Kind.WARNING
                        || d.getKind() == Diagnostic.Kind.MANDATORY_WARNING) {
                    found.add("README.md line " + readmeLine(s, d.getLineNumber()) + ": " + d.getMessage(Locale.ROOT));
                }
            }
            if (!ok && found.isEmpty()) {
                found.add("README.md's java block at line " + s.firstLine() + " does not compile");
            }
            if (!found.isEmpty()) {
                failures.add(String.join("\n", found) + "\nas compiled:\n" + numbered(source));
            }
        }
        if (!failures.isEmpty()) {
            fail(String.join("\n", failures));
        }
    }

    @Test
    void givenLinesBecomeParametersAndImportsGoAboveTheClass() {
        Snippet s = new Snippet(1, List.of("import java.util.List;", "// given: World world, int rank  // a note",
                "List<String> l = List.of();"));
        String source = wrap(s, 7);
        assertTrue(source.startsWith("import java.util.List;\nclass ReadmeSnippet7 {\n"), source);
        assertTrue(source.contains("void snippet(World world, int rank) throws Exception {"), source);
        assertEquals(3, readmeLine(new Snippet(3, s.lines()), 4));
        assertEquals(1, javaBlocks(List.of("x", "```java", "a;", "```", "```", "b", "```")).size());
    }

    private static String numbered(String source) {
        StringBuilder b = new StringBuilder();
        String[] lines = source.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            b.append(String.format(Locale.ROOT, "%4d  %s%n", i + 1, lines[i]));
        }
        return b.toString();
    }
}
