package io.gda4j.gdrcopy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every {@link GdrcopyStatus} outcome, produced through the {@link GdrcopyProbe} seam on a machine without gdrcopy. */
class GdrcopyStatusTest {

    private static final GdrcopyStatus.Version V2_5 = new GdrcopyStatus.Version(2, 5);

    /** A library that is "there" (or not), whose gdr_open answers as told. */
    private static final class StubProbe implements GdrcopyProbe {
        final String failure;
        final RuntimeException openFailure;
        final AtomicInteger opens = new AtomicInteger();

        StubProbe(String failure, RuntimeException openFailure) {
            this.failure = failure;
            this.openFailure = openFailure;
        }

        @Override
        public String libraryName() {
            return GdrcopyConfig.LIBRARY_DEFAULT;
        }

        @Override
        public Optional<String> libraryFailure() {
            return Optional.ofNullable(failure);
        }

        @Override
        public GdrcopyStatus.Version runtimeVersion() {
            return V2_5;
        }

        @Override
        public GdrcopyStatus.Version openAndReadDriverVersion() {
            opens.incrementAndGet();
            if (openFailure != null) {
                throw openFailure;
            }
            return new GdrcopyStatus.Version(2, 4);
        }
    }

    @Test
    void libraryAbsent(@TempDir Path dir) {
        StubProbe probe = new StubProbe("not found (libgdrapi.so.2: cannot open shared object file)", null);
        GdrcopyStatus status = GdrcopyStatus.probe(probe, dir);
        assertEquals(GdrcopyStatus.State.LIBRARY_ABSENT, status.state());
        assertEquals("libgdrapi.so.2 not found: gdrcopy is not installed", status.sentence());
        assertEquals("gdrcopy: libgdrapi.so.2 not found: gdrcopy is not installed", status.oneLine());
        assertTrue(status.detail().contains("cannot open shared object file"));
        assertFalse(status.isAvailable());
        assertTrue(status.runtimeVersion().isEmpty());
        assertEquals(0, probe.opens.get(), "no gdr_open without a library");
    }

    @Test
    void driverAbsentWhenTheDeviceNodeIsMissing(@TempDir Path dir) {
        StubProbe probe = new StubProbe(null, null);
        Path missing = dir.resolve("gdrdrv");
        GdrcopyStatus status = GdrcopyStatus.probe(probe, missing);
        assertEquals(GdrcopyStatus.State.DRIVER_ABSENT, status.state());
        assertEquals("libgdrapi is present but " + missing + " is missing: load the gdrdrv kernel module",
                status.sentence());
        assertEquals(Optional.of(V2_5), status.runtimeVersion());
        assertEquals(0, probe.opens.get(), "no gdr_open without the device node");
    }

    @Test
    void driverAbsentSentenceNamesTheDefaultNode() {
        GdrcopyStatus status = GdrcopyStatus.driverAbsent(V2_5, Path.of(GdrcopyConfig.DEVICE_DEFAULT));
        assertEquals("libgdrapi is present but /dev/gdrdrv is missing: load the gdrdrv kernel module",
                status.sentence());
    }

    @Test
    void openFailedWhenGdrOpenFails(@TempDir Path dir) throws IOException {
        Path node = Files.createFile(dir.resolve("gdrdrv"));
        GdrcopyException cause = GdrcopyException.openFailed(node, true);
        GdrcopyStatus status = GdrcopyStatus.probe(new StubProbe(null, cause), node);
        assertEquals(GdrcopyStatus.State.OPEN_FAILED, status.state());
        assertTrue(status.sentence().startsWith("libgdrapi and " + node + " are present but gdr_open failed"));
        assertEquals(cause.getMessage(), status.detail());
    }

    @Test
    void neverThrowsEvenWhenTheProbeBreaks(@TempDir Path dir) throws IOException {
        Path node = Files.createFile(dir.resolve("gdrdrv"));
        GdrcopyStatus status = GdrcopyStatus.probe(new StubProbe(null, new IllegalStateException("boom")), node);
        assertEquals(GdrcopyStatus.State.OPEN_FAILED, status.state());
        assertTrue(status.detail().contains("boom"));
    }

    @Test
    void availableWithVersions(@TempDir Path dir) throws IOException {
        Path node = Files.createFile(dir.resolve("gdrdrv"));
        GdrcopyStatus status = GdrcopyStatus.probe(new StubProbe(null, null), node);
        assertEquals(GdrcopyStatus.State.AVAILABLE, status.state());
        assertTrue(status.isAvailable());
        assertEquals("gdrcopy is available: libgdrapi 2.5, gdrdrv 2.4 at " + node, status.sentence());
        assertEquals(Optional.of(V2_5), status.runtimeVersion());
        assertEquals(Optional.of(new GdrcopyStatus.Version(2, 4)), status.driverVersion());
    }

    @Test
    void printsOneLine(@TempDir Path dir) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        GdrcopyStatus.probe(new StubProbe("gone", null), dir).printTo(new PrintStream(bytes, true,
                StandardCharsets.UTF_8));
        String printed = bytes.toString(StandardCharsets.UTF_8);
        assertEquals("gdrcopy: libgdrapi.so.2 not found: gdrcopy is not installed" + System.lineSeparator(), printed);
    }

    @Test
    void everySentenceIsOneLine(@TempDir Path dir) throws IOException {
        Path node = Files.createFile(dir.resolve("gdrdrv"));
        GdrcopyStatus[] all = {
                GdrcopyStatus.probe(new StubProbe("a\nb", null), node),
                GdrcopyStatus.probe(new StubProbe(null, null), dir.resolve("absent")),
                GdrcopyStatus.probe(new StubProbe(null, GdrcopyException.openFailed(node, true)), node),
                GdrcopyStatus.probe(new StubProbe(null, null), node)};
        for (GdrcopyStatus status : all) {
            assertFalse(status.oneLine().contains("\n"), status.oneLine());
        }
    }
}
