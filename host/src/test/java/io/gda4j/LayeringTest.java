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
import io.gda4j.transport.LayeringFixtureSpiNamesRank;
import io.gda4j.transport.LinkEnd;
import io.gda4j.transport.TransportProvider;
import io.gda4j.world.LayeringFixtureNamesTransport;
import io.gda4j.world.Rank;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The layering of gda4j-host's packages, bottom to top (docs/ARCHITECTURE.md, "Layers", draws it); a package may use
 * only the layers named for it, and no two packages may use each other, however indirectly.
 * <pre>
 *   moe          MoE dispatch/combine, its references      -> world, transport, cuda, config
 *   p2p, ibgda   the transports of this module             -> world, transport, nic, verbs, mlx5, cuda, config
 *   nic          NICs: the interface, mlx5, emulated       -> verbs, mlx5, cuda, config
 *   verbs        libibverbs/libmlx5 bindings               -> mlx5, config
 *   mlx5         WQE/CQE byte layouts and codecs           -> nothing
 *   world        worlds, ranks, heaps, device view         -> transport, bootstrap, hostflag, cuda, config
 *   transport    the transport table, SPI, choice, offers  -> cuda, config
 *   hostflag     host-to-GPU flags                         -> gdrcopy (module gda4j-gdrcopy), cuda
 *   bootstrap    TCP rendezvous of the processes           -> config
 *   cuda         JCuda: contexts, memory, streams, modules -> nothing
 *   config       properties and environment variables      -> nothing
 * </pre>
 * The proxy transport (module gda4j-proxy) and the samples sit above all of these; Maven keeps their arrows down. The
 * world, the MoE buffers and the SPI name no transport at all, the proxy's included ({@link #noTransportByName}): they
 * ask a {@code Transport} for its traits, and each provider owns its tag. The
 * benchmark rigs and the NCCL binding they compare with live in the samples (io.gda4j.samples.moe, .nccl), not here:
 * a package of them put back in this module is in no layer, which {@link #everyHostPackageIsInALayer} refuses.
 */
@Timeout(120)
class LayeringTest {
    static JavaClasses host;

    @BeforeAll
    static void importHost() {
        host = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.gda4j");
        assertTrue(host.contain(Rank.class) && host.contain(TransportProvider.class) && host.size() > 200,
                "the host's classes were not found: " + host.size());
    }

    static LayeredArchitecture layers() {
        return layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("config").definedBy("io.gda4j.config..")
                .layer("cuda").definedBy("io.gda4j.cuda..")
                .layer("bootstrap").definedBy("io.gda4j.bootstrap..")
                .layer("gdrcopy").definedBy("io.gda4j.gdrcopy..")
                .layer("hostflag").definedBy("io.gda4j.hostflag..")
                .layer("transport").definedBy("io.gda4j.transport..")
                .layer("world").definedBy("io.gda4j.world..")
                .layer("mlx5").definedBy("io.gda4j.mlx5..")
                .layer("verbs").definedBy("io.gda4j.verbs..")
                .layer("nic").definedBy("io.gda4j.nic..")
                .layer("transports").definedBy("io.gda4j.p2p..", "io.gda4j.ibgda..")
                .layer("moe").definedBy("io.gda4j.moe..")
                .whereLayer("config").mayNotAccessAnyLayer()
                .whereLayer("cuda").mayNotAccessAnyLayer()
                .whereLayer("mlx5").mayNotAccessAnyLayer()
                .whereLayer("bootstrap").mayOnlyAccessLayers("config")
                .whereLayer("gdrcopy").mayNotAccessAnyLayer()
                .whereLayer("hostflag").mayOnlyAccessLayers("gdrcopy", "cuda")
                .whereLayer("transport").mayOnlyAccessLayers("cuda", "config")
                .whereLayer("world").mayOnlyAccessLayers("transport", "bootstrap", "hostflag", "cuda", "config")
                .whereLayer("verbs").mayOnlyAccessLayers("mlx5", "config")
                .whereLayer("nic").mayOnlyAccessLayers("verbs", "mlx5", "cuda", "config")
                .whereLayer("transports").mayOnlyAccessLayers("world", "transport", "nic", "verbs", "mlx5", "cuda",
                        "config")
                .whereLayer("moe").mayOnlyAccessLayers("world", "transport", "cuda", "config");
    }

    /**
     * The packages below and beside the transports name none of them: a tag's traits say what the world and the MoE
     * buffers need to know. The layers already keep world and moe off p2p and ibgda; this rule says it of all three
     * transports, the proxy too, which sits in another module and so in no layer here.
     */
    static ArchRule noTransportByName() {
        return noClasses().that().resideInAnyPackage("io.gda4j.world..", "io.gda4j.moe..", "io.gda4j.transport..")
                .should().dependOnClassesThat().resideInAnyPackage("io.gda4j.p2p..", "io.gda4j.ibgda..",
                        "io.gda4j.proxy..")
                .because("a provider owns its tag; the world asks the tag's traits (docs/ARCHITECTURE.md, Transports)");
    }

    static ArchRule noCycles() {
        return slices().matching("io.gda4j.(**)").should().beFreeOfCycles();
    }

    @Test
    void everyPackageUsesOnlyTheLayersBelowIt() {
        layers().check(host);
    }

    @Test
    void noPackagesUseEachOther() {
        noCycles().check(host);
    }

    @Test
    void worldMoeAndSpiNameNoTransport() {
        noTransportByName().check(host);
    }

    @Test
    void everyHostPackageIsInALayer() {
        // A new package must be placed in the layering above, or its arrows go unchecked.
        layers().ensureAllClassesAreContainedInArchitecture().check(host);
    }

    /** The rules are not vacuous: an arrow up, a cycle and the world naming a transport, in fixtures, are reported. */
    @Test
    void anArrowUpAndACycleAreReported() {
        JavaClasses upward = new ClassFileImporter().importClasses(LayeringFixtureUpward.class, Rank.class);
        EvaluationResult up = layers().evaluate(upward);
        assertTrue(up.hasViolation(), "cuda -> world must be refused");
        assertTrue(up.getFailureReport().toString().contains("LayeringFixtureUpward"), up.getFailureReport().toString());

        // The transport SPI sits below the world: naming a world type in it is an arrow up, and a cycle with world.
        JavaClasses spiNamesRank = new ClassFileImporter().importClasses(LayeringFixtureSpiNamesRank.class, Rank.class);
        EvaluationResult spiUp = layers().evaluate(spiNamesRank);
        assertTrue(spiUp.hasViolation(), "transport -> world must be refused");
        assertTrue(spiUp.getFailureReport().toString().contains("LayeringFixtureSpiNamesRank"),
                spiUp.getFailureReport().toString());
        JavaClasses spiCycle = new ClassFileImporter().importClasses(LayeringFixtureSpiNamesRank.class, LinkEnd.class,
                Rank.class);
        assertTrue(noCycles().evaluate(spiCycle).hasViolation(), "transport <-> world must be reported as a cycle");

        // The world comparing a tag with a provider's constant.
        EvaluationResult byName = noTransportByName().evaluate(new ClassFileImporter()
                .importClasses(LayeringFixtureNamesTransport.class));
        assertTrue(byName.hasViolation(), "world -> p2p must be refused");
        assertTrue(byName.getFailureReport().toString().contains("P2pTransport"), byName.getFailureReport().toString());

        JavaClasses cycle = new ClassFileImporter().importPackagesOf(LayeringFixtureCycle.class, Bootstrap.class);
        assertTrue(noCycles().evaluate(cycle).hasViolation(), "config <-> bootstrap must be reported as a cycle");
        JavaClasses withoutFixture = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackagesOf(LayeringFixtureCycle.class, Bootstrap.class);
        assertFalse(noCycles().evaluate(withoutFixture).hasViolation(), "bootstrap -> config alone is no cycle");
    }
}
