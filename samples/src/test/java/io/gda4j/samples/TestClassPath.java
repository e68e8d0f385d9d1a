package io.gda4j.samples;

import java.io.File;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashSet;

/**
 * The class path these tests run on, for the {@code gda4j} JVMs they start. {@code java.class.path} alone is not it:
 * the JUnit console launcher ({@code --class-path}, as on the GPU machine) loads the tests through a class loader of
 * its own. (The host module's test {@code ChildJvm.classPath()} does the same; test classes do not cross modules.)
 */
final class TestClassPath {
    private TestClassPath() {
    }

    static String get() {
        LinkedHashSet<String> entries = new LinkedHashSet<>();
        for (ClassLoader l = TestClassPath.class.getClassLoader(); l != null; l = l.getParent()) {
            if (l instanceof URLClassLoader u) {
                for (URL url : u.getURLs()) {
                    try {
                        entries.add(Path.of(url.toURI()).toString());
                    } catch (URISyntaxException | IllegalArgumentException e) {
                        // not a file: a child JVM could not use it either
                    }
                }
            }
        }
        entries.addAll(Arrays.asList(System.getProperty("java.class.path").split(File.pathSeparator)));
        entries.remove("");
        return String.join(File.pathSeparator, entries);
    }
}
