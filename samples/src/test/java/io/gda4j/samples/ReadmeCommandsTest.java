package io.gda4j.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * The README's commands say what they cost and do what it says: the set-up build leaves the sources and javadoc jars
 * to the {@code release} profile, the install command that promises them names that profile, and every JMH command
 * states how long it runs.
 */
class ReadmeCommandsTest {
    private static final String SOURCE_PLUGIN = "maven-source-plugin";
    private static final String JAVADOC_PLUGIN = "maven-javadoc-plugin";
    /** JMH's benchmarks have a jar of their own: the command line's ships without JMH. */
    private static final String BENCHMARKS_JAR = "benchmarks/target/gda4j-benchmarks.jar";

    private static List<String> readme() throws Exception {
        return Files.readAllLines(ReadmeSnippetsTest.readme(), StandardCharsets.UTF_8);
    }

    /** The artifactIds of the plugins directly under {@code build/plugins} of {@code build}. */
    private static List<String> plugins(Element build) {
        List<String> ids = new ArrayList<>();
        for (Element plugins : children(build, "plugins")) {
            for (Element plugin : children(plugins, "plugin")) {
                children(plugin, "artifactId").forEach(a -> ids.add(a.getTextContent().strip()));
            }
        }
        return ids;
    }

    private static List<Element> children(Element parent, String name) {
        List<Element> out = new ArrayList<>();
        NodeList nodes = parent.getChildNodes();
        for (int i = 0; i < nodes.getLength(); i++) {
            Node n = nodes.item(i);
            if (n instanceof Element e && e.getTagName().equals(name)) {
                out.add(e);
            }
        }
        return out;
    }

    @Test
    void sourcesAndJavadocJarsAreBuiltByTheReleaseProfileAndTheInstallCommandNamesIt() throws Exception {
        Path pom = ReadmeSnippetsTest.readme().resolveSibling("pom.xml");
        Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile());
        Element project = doc.getDocumentElement();
        List<String> always = new ArrayList<>();
        children(project, "build").forEach(b -> always.addAll(plugins(b)));
        assertFalse(always.contains(SOURCE_PLUGIN) || always.contains(JAVADOC_PLUGIN),
                "the set-up build makes sources or javadoc jars: " + always);
        List<String> release = new ArrayList<>();
        for (Element profiles : children(project, "profiles")) {
            for (Element profile : children(profiles, "profile")) {
                if (children(profile, "id").stream().anyMatch(i -> i.getTextContent().strip().equals("release"))) {
                    children(profile, "build").forEach(b -> release.addAll(plugins(b)));
                }
            }
        }
        assertTrue(release.containsAll(List.of(SOURCE_PLUGIN, JAVADOC_PLUGIN)), "profile release: " + release);

        List<String> lines = readme();
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains("-sources` and `-javadoc` jars")) {
                String command = lines.subList(i, Math.min(lines.size(), i + 6)).stream()
                        .filter(l -> l.startsWith("mvn ")).findFirst().orElseThrow();
                assertTrue(command.contains("-Prelease"), "promises sources and javadoc jars: " + command);
            }
        }
        assertTrue(lines.contains("mvn -B -DskipTests package"), "the set-up command");
        String ci = Files.readString(pom.resolveSibling(".ci").resolve("run"), StandardCharsets.UTF_8);
        assertTrue(ci.contains("mvn -B -ntp -Prelease verify"), "CI keeps javadoc's checks");
    }

    @Test
    void everyJmhCommandSaysHowLongItRuns() throws Exception {
        int commands = 0;
        for (String line : readme()) {
            if (line.contains(BENCHMARKS_JAR) && line.startsWith("java ")) {
                commands++;
                assertTrue(line.matches(".*#.*about \\d+ (s|min).*"), "no run time stated: " + line);
            }
        }
        assertEquals(2, commands, "the README's JMH commands");
        for (String line : readme()) {
            assertTrue(!line.contains("org.openjdk.jmh.Main") || !line.contains("samples/target/gda4j.jar"),
                    "the command line's jar holds no JMH: " + line);
        }
        Path pom = ReadmeSnippetsTest.readme().resolveSibling("benchmarks").resolve("pom.xml");
        String text = Files.readString(pom, StandardCharsets.UTF_8);
        assertTrue(text.contains("<finalName>gda4j-benchmarks</finalName>") && text.contains(
                "<mainClass>org.openjdk.jmh.Main</mainClass>"), "the README's jar is the one benchmarks/ builds");
        String samples = Files.readString(pom.getParent().resolveSibling("samples").resolve("pom.xml"),
                StandardCharsets.UTF_8);
        assertTrue(!samples.contains("jmh-core") && samples.contains("<artifactId>VectorGraphics2D</artifactId>"),
                "the command line depends on no JMH and leaves XChart's vector encoders out");
    }
}
