package io.gda4j;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import io.gda4j.nic.Nic;
import io.gda4j.proxy.LayeringFixtureCastsNic;
import io.gda4j.world.LayeringFixtureCallsCuda;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.methods;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Each native library has one door, in the layer that owns it:
 * <ul>
 *   <li>JCuda is used in {@code io.gda4j.cuda} only (its classes, and in the sources its constants, which javac
 *       inlines so that no class file shows them);</li>
 *   <li>libcuda is bound through JNA once, by {@code io.gda4j.cuda.LibCuda}: no other class declares a native
 *       {@code cu*} entry point, and no source outside {@code io.gda4j.cuda} names the library;</li>
 *   <li>a NIC is used through {@link Nic} (and its facets) outside {@code io.gda4j.nic}: no class there names an
 *       implementation ({@code EmulatedNic}, {@code Mlx5Nic}), by type, cast or {@code instanceof}.</li>
 * </ul>
 */
@Timeout(120)
class NativeBindingsTest {
    static final String LIBCUDA_BINDING = "io.gda4j.cuda.LibCuda";

    static ArchRule jcudaOnlyInCuda() {
        return noClasses().that().resideOutsideOfPackage("io.gda4j.cuda..").should().dependOnClassesThat()
                .resideInAPackage("jcuda..")
                .because("io.gda4j.cuda is the one door to JCuda (cuda.Driver for raw calls)");
    }

    static ArchRule libcudaBoundOnce() {
        return methods().that().haveNameMatching("cu[A-Z].*").and().haveModifier(JavaModifier.NATIVE).should()
                .beDeclaredIn(LIBCUDA_BINDING).because("libcuda is bound through JNA once, by " + LIBCUDA_BINDING);
    }

    static ArchRule noNicImplementationOutsideNic() {
        DescribedPredicate<JavaClass> nicImplementation = new DescribedPredicate<>("implement io.gda4j.nic.Nic") {
            @Override
            public boolean test(JavaClass c) {
                return c.isAssignableTo(Nic.class) && !c.isInterface();
            }
        };
        return noClasses().that().resideOutsideOfPackage("io.gda4j.nic..").should()
                .dependOnClassesThat(nicImplementation)
                .because("a NIC is asked through Nic and its facets (Nic.facet), never downcast");
    }

    static List<ArchRule> rules() {
        return List.of(jcudaOnlyInCuda(), libcudaBoundOnce(), noNicImplementationOutsideNic());
    }

    @Test
    void theClassesKeepToTheDoors() {
        JavaClasses all = Codebase.mainClasses();
        assertTrue(all.contain(LIBCUDA_BINDING), LIBCUDA_BINDING + " moved: update this test");
        Codebase.checkAll(rules(), all);
    }

    /** {@code jcuda.} in code (an import, a qualified name) or "libcuda" in code or a string. */
    static final Pattern NATIVE_NAMES = Pattern.compile("\\bjcuda\\.|libcuda");

    static List<String> sourcesNamingCudaOutsideIt(List<Path> sources) {
        List<String> found = new ArrayList<>();
        for (Path p : sources) {
            if (!Codebase.packageOf(p).startsWith("io.gda4j.cuda")) {
                found.addAll(Codebase.find(p, NATIVE_NAMES));
            }
        }
        return found;
    }

    @Test
    void theSourcesKeepToTheDoors() {
        List<String> found = sourcesNamingCudaOutsideIt(Codebase.mainSources());
        assertTrue(found.isEmpty(), "JCuda or libcuda named outside io.gda4j.cuda:\n" + String.join("\n", found));
    }

    /** The rules are not vacuous: a world fixture calling JCuda and binding a cu* symbol, and a proxy fixture
     * casting to EmulatedNic, are reported, by the class rules and the source rule. */
    @Test
    void aDoorBypassedIsReported() {
        JavaClasses fixtures = new ClassFileImporter().importClasses(LayeringFixtureCallsCuda.class,
                LayeringFixtureCastsNic.class);
        List<String> reports = new ArrayList<>();
        for (ArchRule r : rules()) {
            EvaluationResult e = r.evaluate(fixtures);
            assertTrue(e.hasViolation(), r.getDescription());
            reports.add(e.getFailureReport().toString());
        }
        String all = String.join("\n", reports);
        assertTrue(all.contains("jcuda.driver.JCudaDriver"), all);
        assertTrue(all.contains("cuMemAlloc"), all);
        assertTrue(all.contains("EmulatedNic"), all);

        Path fixture = Codebase.root().resolve("checks/src/test/java/io/gda4j/world/LayeringFixtureCallsCuda.java");
        List<String> found = sourcesNamingCudaOutsideIt(List.of(fixture));
        assertTrue(found.stream().anyMatch(l -> l.contains("import static jcuda.driver.CUresult.CUDA_SUCCESS")),
                String.join("\n", found));
        assertTrue(found.stream().anyMatch(l -> l.contains("\"libcuda.so.1\"")), String.join("\n", found));
    }
}
