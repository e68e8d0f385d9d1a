package io.gda4j;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import com.tngtech.archunit.library.Architectures.LayeredArchitecture;
import io.gda4j.bootstrap.Bootstrap;
import io.gda4j.config.LayeringFixtureCycle;
import io.gda4j.cuda.LayeringFixtureUpward;
import io.gda4j.moe.ht.LayeringFixtureHtNamesLl;
import io.gda4j.moe.ll.LowLatencyRank;
import io.gda4j.proxy.LayeringFixtureProxyUsesIbgda;
import io.gda4j.transport.LayeringFixtureSpiNamesRank;
import io.gda4j.transport.LinkEnd;
import io.gda4j.world.Rank;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The layering of every module's packages, bottom to top (docs/ARCHITECTURE.md, "Layers", draws it); a package may
 * use only the layers named for it, and no two packages may use each other, however indirectly.
 * <pre>
 *   samples       the command line (gda4j-samples)          -> everything below
 *   samples.moe   the MoE benchmark rigs                    -> samples.nccl, moe, world, transport, cuda, config
 *   benchmarks    JMH benchmarks (gda4j-benchmarks)         -> the transports, mlx5
 *   samples.nccl  the NCCL binding the rigs compare with    -> cuda, config
 *   moe           MoE dispatch/combine, its references      -> world, transport, cuda, config
 *                 (inside, {@link #moeLayers}: the door io.gda4j.moe over the protocols moe.ht and moe.ll, which
 *                 never use each other, over moe.core and moe.tensor; moe.check on top)
 *   p2p, ibgda,   the transports (proxy: gda4j-proxy); none -> world, transport, nic, verbs, mlx5, cuda, config
 *   proxy           uses another ({@link TransportNamesTest})
 *   nic           NICs: the interface, mlx5, emulated       -> verbs, mlx5, cuda, config
 *   verbs         libibverbs/libmlx5 bindings               -> mlx5, config
 *   mlx5          WQE/CQE byte layouts and codecs           -> nothing
 *   world         worlds, ranks, heaps, device view         -> transport, bootstrap, hostflag, cuda, config
 *   transport     the transport table, SPI, choice, offers  -> cuda, config
 *   hostflag      host-to-GPU flags                         -> gdrcopy, cuda
 *   gdrcopy       the gdrcopy binding (gda4j-gdrcopy)       -> nothing
 *   bootstrap     TCP rendezvous of the processes           -> config
 *   cuda          JCuda and libcuda: contexts, memory, ...  -> ptx
 *   ptx           the shipped PTX (gda4j-device-ptx)        -> nothing
 *   config        settings: properties, environment, values -> nothing
 * </pre>
 * Maven keeps each module's arrows pointing at the modules it depends on; these rules keep the packages in order
 * inside and across them. The native bindings have rules of their own ({@link NativeBindingsTest}), and so has naming
 * a transport ({@link TransportNamesTest}).
 */
@Timeout(120)
class LayeringTest {
    static LayeredArchitecture layers() {
        return layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("config").definedBy("io.gda4j.config..")
                .layer("cuda").definedBy("io.gda4j.cuda..")
                .layer("ptx").definedBy("io.gda4j.ptx..")
                .layer("bootstrap").definedBy("io.gda4j.bootstrap..")
                .layer("gdrcopy").definedBy("io.gda4j.gdrcopy..")
                .layer("hostflag").definedBy("io.gda4j.hostflag..")
                .layer("transport").definedBy("io.gda4j.transport..")
                .layer("world").definedBy("io.gda4j.world..")
                .layer("mlx5").definedBy("io.gda4j.mlx5..")
                .layer("verbs").definedBy("io.gda4j.verbs..")
                .layer("nic").definedBy("io.gda4j.nic..")
                .layer("transports").definedBy("io.gda4j.p2p..", "io.gda4j.ibgda..", "io.gda4j.proxy..")
                .layer("moe").definedBy("io.gda4j.moe..")
                .layer("samples.nccl").definedBy("io.gda4j.samples.nccl..")
                .layer("benchmarks").definedBy("io.gda4j.benchmarks..")
                .layer("samples.moe").definedBy("io.gda4j.samples.moe..")
                .layer("samples").definedBy("io.gda4j.samples")
                .whereLayer("config").mayNotAccessAnyLayer()
                .whereLayer("cuda").mayOnlyAccessLayers("ptx")
                .whereLayer("ptx").mayNotAccessAnyLayer()
                .whereLayer("mlx5").mayNotAccessAnyLayer()
                .whereLayer("gdrcopy").mayNotAccessAnyLayer()
                .whereLayer("bootstrap").mayOnlyAccessLayers("config")
                .whereLayer("hostflag").mayOnlyAccessLayers("gdrcopy", "cuda")
                .whereLayer("transport").mayOnlyAccessLayers("cuda", "config")
                .whereLayer("world").mayOnlyAccessLayers("transport", "bootstrap", "hostflag", "cuda", "config")
                .whereLayer("verbs").mayOnlyAccessLayers("mlx5", "config")
                .whereLayer("nic").mayOnlyAccessLayers("verbs", "mlx5", "cuda", "config")
                .whereLayer("transports").mayOnlyAccessLayers("world", "transport", "nic", "verbs", "mlx5", "cuda",
                        "config")
                .whereLayer("moe").mayOnlyAccessLayers("world", "transport", "cuda", "config")
                .whereLayer("samples.nccl").mayOnlyAccessLayers("cuda", "config")
                .whereLayer("benchmarks").mayOnlyAccessLayers("transports", "mlx5")
                .whereLayer("samples.moe").mayOnlyAccessLayers("samples.nccl", "moe", "world", "transport", "cuda",
                        "config")
                .whereLayer("samples").mayOnlyAccessLayers("config", "cuda", "bootstrap", "gdrcopy", "hostflag",
                        "transport", "world", "mlx5", "verbs", "nic", "transports", "moe", "samples.nccl",
                        "samples.moe");
    }

    /**
     * The packages of the MoE layer, bottom to top: what both protocols share, the two protocols side by side (neither
     * uses the other, nor the door above them), the door users call, and the references and checks that drive it.
     */
    static LayeredArchitecture moeLayers() {
        return layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("moe.tensor").definedBy("io.gda4j.moe.tensor..")
                .layer("moe.core").definedBy("io.gda4j.moe.core..")
                .layer("moe.ht").definedBy("io.gda4j.moe.ht..")
                .layer("moe.ll").definedBy("io.gda4j.moe.ll..")
                .layer("moe").definedBy("io.gda4j.moe")
                .layer("moe.check").definedBy("io.gda4j.moe.check..")
                .whereLayer("moe.tensor").mayNotAccessAnyLayer()
                .whereLayer("moe.core").mayOnlyAccessLayers("moe.tensor")
                .whereLayer("moe.ht").mayOnlyAccessLayers("moe.core", "moe.tensor")
                .whereLayer("moe.ll").mayOnlyAccessLayers("moe.core", "moe.tensor")
                .whereLayer("moe").mayOnlyAccessLayers("moe.ht", "moe.ll", "moe.core", "moe.tensor")
                .whereLayer("moe.check").mayOnlyAccessLayers("moe", "moe.ht", "moe.ll", "moe.core", "moe.tensor");
    }

    static ArchRule noCycles() {
        return slices().matching("io.gda4j.(**)").should().beFreeOfCycles();
    }

    @Test
    void everyPackageUsesOnlyTheLayersBelowIt() {
        layers().check(Codebase.mainClasses());
    }

    @Test
    void noPackagesUseEachOther() {
        noCycles().check(Codebase.mainClasses());
    }

    @Test
    void theMoePackagesKeepTheirLayers() {
        moeLayers().check(Codebase.mainClasses());
    }

    @Test
    void everyPackageIsInALayer() {
        // A new package must be placed in the layering above, or its arrows go unchecked.
        layers().ensureAllClassesAreContainedInArchitecture().check(Codebase.mainClasses());
    }

    /** The rules are not vacuous: an arrow up, a cycle and one transport using another, in fixtures, are reported. */
    @Test
    void anArrowUpAndACycleAreReported() {
        JavaClasses upward = new ClassFileImporter().importClasses(LayeringFixtureUpward.class, Rank.class);
        EvaluationResult up = layers().evaluate(upward);
        assertTrue(up.hasViolation(), "cuda -> world must be refused");
        assertTrue(up.getFailureReport().toString().contains("LayeringFixtureUpward"),
                up.getFailureReport().toString());

        // The transport SPI sits below the world: naming a world type in it is an arrow up, and a cycle with world.
        JavaClasses spiNamesRank = new ClassFileImporter().importClasses(LayeringFixtureSpiNamesRank.class, Rank.class);
        EvaluationResult spiUp = layers().evaluate(spiNamesRank);
        assertTrue(spiUp.hasViolation(), "transport -> world must be refused");
        assertTrue(spiUp.getFailureReport().toString().contains("LayeringFixtureSpiNamesRank"),
                spiUp.getFailureReport().toString());
        JavaClasses spiCycle = new ClassFileImporter().importClasses(LayeringFixtureSpiNamesRank.class, LinkEnd.class,
                Rank.class);
        assertTrue(noCycles().evaluate(spiCycle).hasViolation(), "transport <-> world must be reported as a cycle");

        // The proxy module is checked as the host is: proxy -> samples would be an arrow up.
        EvaluationResult proxyUp = layers().evaluate(new ClassFileImporter()
                .importClasses(LayeringFixtureProxyUsesIbgda.class));
        assertTrue(proxyUp.hasViolation(), "proxy -> samples must be refused");
        assertTrue(proxyUp.getFailureReport().toString().contains("io.gda4j.samples.Main"),
                proxyUp.getFailureReport().toString());

        // One MoE protocol using the other.
        EvaluationResult htNamesLl = moeLayers().evaluate(new ClassFileImporter()
                .importClasses(LayeringFixtureHtNamesLl.class, LowLatencyRank.class));
        assertTrue(htNamesLl.hasViolation(), "moe.ht -> moe.ll must be refused");
        assertTrue(htNamesLl.getFailureReport().toString().contains("LayeringFixtureHtNamesLl"),
                htNamesLl.getFailureReport().toString());

        JavaClasses cycle = new ClassFileImporter().importPackagesOf(LayeringFixtureCycle.class, Bootstrap.class);
        assertTrue(noCycles().evaluate(cycle).hasViolation(), "config <-> bootstrap must be reported as a cycle");
        JavaClasses withoutFixture = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackagesOf(LayeringFixtureCycle.class, Bootstrap.class);
        assertFalse(noCycles().evaluate(withoutFixture).hasViolation(), "bootstrap -> config alone is no cycle");
    }
}
