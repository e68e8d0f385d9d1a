package io.gda4j;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the checks read: every module's main classes (imported once, from this module's test class path, where
 * gda4j-samples brings them all) and every module's main sources, found beside this module in the checkout.
 */
final class Codebase {
    /** The library's modules, as the root pom lists them. */
    static final List<String> MODULES = List.of("device-ptx", "gdrcopy", "host", "proxy", "samples");

    private static JavaClasses main;

    private Codebase() {
    }

    /** Every main class of every module; the checks' own fixtures (test classes) are not among them. */
    static synchronized JavaClasses mainClasses() {
        if (main == null) {
            main = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                    .importPackages("io.gda4j");
            for (String c : List.of("io.gda4j.gdrcopy.Gdrcopy", "io.gda4j.world.Rank", "io.gda4j.proxy.ProxyTransport",
                    "io.gda4j.samples.Main")) {
                assertTrue(main.contain(c), "the main classes of every module were not found (" + c
                        + " missing; " + main.size() + " classes)");
            }
        }
        return main;
    }

    /** Checks every rule and fails once, with every rule's violations, rather than at the first rule broken. */
    static void checkAll(List<ArchRule> rules, JavaClasses classes) {
        List<String> reports = new ArrayList<>();
        for (ArchRule r : rules) {
            EvaluationResult e = r.evaluate(classes);
            if (e.hasViolation()) {
                reports.add(e.getFailureReport().toString());
            }
        }
        assertTrue(reports.isEmpty(), String.join("\n", reports));
    }

    /** The checkout's root: the parent of this module's directory (Maven runs tests there). */
    static Path root() {
        Path here = Paths.get("").toAbsolutePath();
        Path root = here.getFileName().toString().equals("checks") ? here.getParent() : here;
        assertTrue(Files.isRegularFile(root.resolve("host/pom.xml")), "no checkout around " + here);
        return root;
    }

    /** Every main source file of every module. */
    static List<Path> mainSources() {
        List<Path> out = new ArrayList<>();
        for (String m : MODULES) {
            out.addAll(javaFiles(root().resolve(m).resolve("src/main/java")));
        }
        assertTrue(out.size() > 300, "the main sources were not found: " + out.size());
        return out;
    }

    static List<Path> javaFiles(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(p -> p.toString().endsWith(".java")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A source's package directory as a Java package name, e.g. {@code io.gda4j.world}. */
    static String packageOf(Path source) {
        Path rel = null;
        for (Path p = source.getParent(); p != null; p = p.getParent()) {
            if (p.endsWith("src/main/java") || p.endsWith("src/test/java")) {
                rel = p.relativize(source.getParent());
                break;
            }
        }
        if (rel == null) {
            throw new IllegalArgumentException("not under src/*/java: " + source);
        }
        return rel.toString().replace('/', '.');
    }

    static String read(Path p) {
        try {
            return Files.readString(p, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * {@code source} with its comments blanked (string and character literals and text blocks kept): what the code
     * and its strings say. Line breaks are kept, so line numbers stay right.
     */
    static String code(String source) {
        StringBuilder out = new StringBuilder(source.length());
        int i = 0;
        int n = source.length();
        while (i < n) {
            char c = source.charAt(i);
            if (source.startsWith("//", i)) {
                int end = source.indexOf('\n', i);
                i = end < 0 ? n : end;
            } else if (source.startsWith("/*", i)) {
                int end = source.indexOf("*/", i + 2);
                end = end < 0 ? n : end + 2;
                source.substring(i, end).chars().filter(ch -> ch == '\n').forEach(ch -> out.append('\n'));
                i = end;
            } else if (source.startsWith("\"\"\"", i)) {
                int end = source.indexOf("\"\"\"", i + 3);
                end = end < 0 ? n : end + 3;
                out.append(source, i, end);
                i = end;
            } else if (c == '"' || c == '\'') {
                int j = i + 1;
                while (j < n && source.charAt(j) != c && source.charAt(j) != '\n') {
                    j += source.charAt(j) == '\\' ? 2 : 1;
                }
                int end = Math.min(n, j + 1);
                out.append(source, i, end);
                i = end;
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString();
    }

    /** "path:line: text" for each line of the code of {@code source} (comments blanked) that {@code pattern} finds. */
    static List<String> find(Path source, Pattern pattern) {
        List<String> out = new ArrayList<>();
        String[] lines = code(read(source)).split("\n", -1);
        for (int l = 0; l < lines.length; l++) {
            Matcher m = pattern.matcher(lines[l]);
            if (m.find()) {
                out.add(root().relativize(source.toAbsolutePath()) + ":" + (l + 1) + ": " + lines[l].strip());
            }
        }
        return out;
    }
}
