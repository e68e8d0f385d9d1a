package io.gda4j;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleReference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The API surface is written once, in README.md's "API" table, and the built modules keep to it: each module
 * exports to everyone exactly the packages of the table's API column, every other package of it is in the internal
 * column (exported to gda4j's own modules only, if at all), and each internal package's documentation says it is
 * internal while no API package's does. Each module's {@code provides} agree with its {@code META-INF/services}.
 */
@Timeout(120)
class ModuleApiTest {
    static final String SECTION = "## API";
    static final Pattern PACKAGE = Pattern.compile("`(io\\.gda4j(?:\\.[a-z0-9]+)*)`");

    /** One row of the table: the module and its two columns of packages. */
    record Row(String module, Set<String> exported, Set<String> internal) {
    }

    /** The rows of README.md's API table, by module. */
    static Map<String, Row> readmeTable(String readme) {
        int at = readme.indexOf("\n" + SECTION + "\n");
        assertTrue(at >= 0, "README.md has no \"" + SECTION + "\" section");
        String section = readme.substring(at + SECTION.length() + 2);
        int next = section.indexOf("\n## ");
        section = next < 0 ? section : section.substring(0, next);
        Map<String, Row> rows = new LinkedHashMap<>();
        for (String line : section.split("\n")) {
            if (!line.startsWith("| `io.gda4j.")) {
                continue;
            }
            String[] cells = line.split("\\|", -1);
            assertEquals(6, cells.length, "a row of README.md's API table has not 4 columns: " + line);
            Matcher module = PACKAGE.matcher(cells[1]);
            assertTrue(module.find(), "no module in " + line);
            Row row = new Row(module.group(1), packages(cells[3]), packages(cells[4]));
            assertTrue(rows.put(row.module(), row) == null, "README.md's API table lists " + row.module() + " twice");
        }
        return rows;
    }

    static Set<String> packages(String cell) {
        Set<String> out = new TreeSet<>();
        Matcher m = PACKAGE.matcher(cell);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    static Set<String> exportedToAll(ModuleDescriptor d) {
        Set<String> out = new TreeSet<>();
        for (ModuleDescriptor.Exports e : d.exports()) {
            if (!e.isQualified()) {
                out.add(e.source());
            }
        }
        return out;
    }

    @Test
    void eachModuleExportsWhatReadmeSays() {
        Map<String, Row> table = readmeTable(Codebase.read(Codebase.root().resolve("README.md")));
        assertEquals(new TreeSet<>(ModulePath.MODULES), new TreeSet<>(table.keySet()),
                "README.md's API table must list every gda4j module once");
        List<Path> entries = ModulePath.entries();
        List<String> wrong = new ArrayList<>();
        for (String name : ModulePath.MODULES) {
            ModuleDescriptor d = ModulePath.descriptor(entries, name);
            Row row = table.get(name);
            if (!exportedToAll(d).equals(row.exported())) {
                wrong.add(name + " exports " + exportedToAll(d) + " to everyone; README.md says " + row.exported());
            }
            Set<String> both = new TreeSet<>(row.exported());
            both.retainAll(row.internal());
            Set<String> listed = new TreeSet<>(row.exported());
            listed.addAll(row.internal());
            if (!both.isEmpty() || !listed.equals(new TreeSet<>(d.packages()))) {
                wrong.add(name + " has the packages " + new TreeSet<>(d.packages()) + "; README.md lists "
                        + row.exported() + " as API and " + row.internal() + " as internal");
            }
        }
        assertTrue(wrong.isEmpty(), String.join("\n", wrong));
    }

    /**
     * The providers are declared twice, for the two paths: {@code provides} in module-info (the module path reads no
     * services files) and {@code META-INF/services} (the class path, the shaded gda4j.jar). They must agree.
     */
    @Test
    void eachModuleProvidesWhatItsServicesFilesRegister() {
        List<Path> entries = ModulePath.entries();
        List<String> wrong = new ArrayList<>();
        for (String name : ModulePath.MODULES) {
            ModuleReference module = ModulePath.module(entries, name);
            Map<String, List<String>> provides = new TreeMap<>();
            for (ModuleDescriptor.Provides p : module.descriptor().provides()) {
                provides.put(p.service(), p.providers());
            }
            Map<String, List<String>> files = ModulePath.servicesFiles(module);
            if (!provides.equals(files)) {
                wrong.add(name + " provides " + provides + " in module-info.java but registers " + files
                        + " in META-INF/services");
            }
        }
        assertTrue(wrong.isEmpty(), String.join("\n", wrong));
    }

    /** Internal packages say so where a reader of the javadoc looks; API packages do not. */
    @Test
    void internalPackagesSayTheyAreInternal() {
        Map<String, Row> table = readmeTable(Codebase.read(Codebase.root().resolve("README.md")));
        List<String> wrong = new ArrayList<>();
        for (Row row : table.values()) {
            for (String pkg : row.internal()) {
                String doc = packageDoc(pkg);
                if (doc == null || !doc.contains("Internal")) {
                    wrong.add(pkg + " is internal, but its package-info.java "
                            + (doc == null ? "is missing" : "does not say \"Internal\""));
                }
            }
            for (String pkg : row.exported()) {
                String doc = packageDoc(pkg);
                if (doc == null) {
                    wrong.add(pkg + " is API but has no package-info.java");
                } else if (doc.contains("Internal")) {
                    wrong.add(pkg + " is API, but its package-info.java says \"Internal\"");
                }
            }
        }
        assertTrue(wrong.isEmpty(), String.join("\n", wrong));
    }

    /** The text of {@code pkg}'s package-info.java in whichever module holds it, or null. */
    static String packageDoc(String pkg) {
        for (String module : Codebase.MODULES) {
            Path p = Codebase.root().resolve(module).resolve("src/main/java").resolve(pkg.replace('.', '/'))
                    .resolve("package-info.java");
            if (Files.isRegularFile(p)) {
                return Codebase.read(p);
            }
        }
        return null;
    }

    /** The table's reader is not vacuous: a package moved between columns, or a missing row, is seen. */
    @Test
    void theTableIsRead() {
        Map<String, Row> rows = readmeTable("intro\n\n" + SECTION + "\n\ntext\n\n| module | jar | API | internal |\n"
                + "| --- | --- | --- | --- |\n| `io.gda4j.host` | gda4j-host | `io.gda4j.world`, `io.gda4j.cuda` |"
                + " `io.gda4j.nic` |\n| `io.gda4j.proxy` | gda4j-proxy | none: `-m io.gda4j.samples/x` | `io.gda4j.proxy` |"
                + "\n\n## Next\n\n| `io.gda4j.samples` | x | `io.gda4j.samples` | |\n");
        assertEquals(Set.of("io.gda4j.host", "io.gda4j.proxy"), rows.keySet());
        assertEquals(Set.of("io.gda4j.world", "io.gda4j.cuda"), rows.get("io.gda4j.host").exported());
        assertEquals(Set.of("io.gda4j.nic"), rows.get("io.gda4j.host").internal());
        assertEquals(Set.of(), rows.get("io.gda4j.proxy").exported());
        assertFalse(rows.containsKey("io.gda4j.samples"));
    }
}
