package io.gda4j;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReader;
import java.lang.module.ModuleReference;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The library's modules and what they need at run time, as this module's build resolved them (its pom writes the
 * path of gda4j-samples' runtime closure): the module jars in {@code mvn verify}, their {@code target/classes}
 * directories in {@code mvn test}.
 */
final class ModulePath {
    /** The system property the build sets to the file that holds the path. */
    static final String FILE_PROP_NAME = "gda4j.test.modulePathFile";
    /** gda4j's named modules, bottom to top. */
    static final List<String> MODULES = List.of("io.gda4j.ptx", "io.gda4j.gdrcopy", "io.gda4j.host", "io.gda4j.proxy",
            "io.gda4j.samples");
    /** The jar of JCuda's native libraries, which is patched into the jcuda module rather than put on the path. */
    static final String JCUDA_NATIVES_PREFIX = "jcuda-natives-";
    static final String SERVICES = "META-INF/services/";

    private ModulePath() {
    }

    /** Every entry of the path, in the build's order. */
    static List<Path> entries() {
        String file = System.getProperty(FILE_PROP_NAME);
        assertTrue(file != null, FILE_PROP_NAME + " is not set: run this test through Maven (gda4j-checks' pom sets it)");
        String text;
        try {
            text = Files.readString(Path.of(file)).strip();
        } catch (IOException e) {
            throw new UncheckedIOException("the build wrote no module path to " + file, e);
        }
        List<Path> out = new ArrayList<>();
        for (String part : text.split(File.pathSeparator)) {
            if (!part.isBlank()) {
                out.add(Path.of(part.strip()));
            }
        }
        assertFalse(out.isEmpty(), file + " is empty");
        return out;
    }

    /** JCuda's natives jar among {@code entries}. */
    static Path jcudaNatives(List<Path> entries) {
        Optional<Path> natives = entries.stream()
                .filter(p -> p.getFileName().toString().startsWith(JCUDA_NATIVES_PREFIX)).findFirst();
        assertTrue(natives.isPresent(), "no " + JCUDA_NATIVES_PREFIX + "*.jar among " + entries);
        return natives.get();
    }

    /** {@code entries} without JCuda's natives jar, joined as a path. */
    static String withoutJcudaNatives(List<Path> entries) {
        Path natives = jcudaNatives(entries);
        return join(entries.stream().filter(p -> !p.equals(natives)).toList());
    }

    static String join(List<Path> entries) {
        return String.join(File.pathSeparator, entries.stream().map(Path::toString).toList());
    }

    /** gda4j module {@code name}, which must be a named module with a module-info of its own. */
    static ModuleReference module(List<Path> entries, String name) {
        Optional<ModuleReference> found = ModuleFinder.of(entries.toArray(new Path[0])).find(name);
        assertTrue(found.isPresent(), "module " + name + " is not on " + entries);
        assertFalse(found.get().descriptor().isAutomatic(), name + " is an automatic module ("
                + found.get().location().orElse(null) + " has no module-info.class): build the modules in this"
                + " reactor, e.g. mvn -B verify");
        return found.get();
    }

    /** The descriptor of gda4j module {@code name} (see {@link #module}). */
    static ModuleDescriptor descriptor(List<Path> entries, String name) {
        return module(entries, name).descriptor();
    }

    /** What the module's {@code META-INF/services} files register, service by service, for the class path. */
    static Map<String, List<String>> servicesFiles(ModuleReference module) {
        Map<String, List<String>> out = new TreeMap<>();
        try (ModuleReader reader = module.open(); Stream<String> names = reader.list()) {
            for (String name : names.filter(n -> n.startsWith(SERVICES) && n.length() > SERVICES.length()).toList()) {
                try (InputStream in = reader.open(name).orElseThrow()) {
                    List<String> providers = new ArrayList<>();
                    for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                        String p = line.replaceFirst("#.*", "").strip();
                        if (!p.isEmpty()) {
                            providers.add(p);
                        }
                    }
                    out.put(name.substring(SERVICES.length()), providers);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not read " + module.location().orElse(null), e);
        }
        return out;
    }
}
