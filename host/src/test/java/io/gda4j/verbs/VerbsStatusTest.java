package io.gda4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * What {@code gda4j info} will say: library absent, library without devices, or devices. Nothing may throw.
 * Where this machine has no libibverbs or has devices, the "no device" checks are skipped with the reason.
 */
class VerbsStatusTest {
    private static final String ABSENT_LIBRARY = "libibverbs-gda4j-test-absent.so.1";

    @Test
    void absentLibraryIsReportedNotThrown() {
        VerbsStatus status = Verbs.probe(ABSENT_LIBRARY, "libmlx5-gda4j-test-absent.so.1");
        assertEquals(VerbsStatus.Kind.LIBRARY_ABSENT, status.kind());
        assertEquals(0, status.deviceCount());
        assertFalse(status.mlx5Available());
        assertTrue(status.sentence().startsWith("RDMA verbs: " + ABSENT_LIBRARY + " was not found ("),
                status.sentence());
        assertTrue(status.sentence().contains("only the emulated NIC"), status.sentence());
    }

    @Test
    void libraryWithoutDevicesSaysSo() {
        VerbsStatus status = Verbs.status();
        assumeTrue(status.kind() == VerbsStatus.Kind.NO_DEVICE, "this machine is not 'libibverbs without devices': "
                + status.sentence());
        assertTrue(LibIbverbs.isAvailable(), LibIbverbs::unavailableReason);
        assertEquals(List.of(), RdmaDevices.list());
        assertTrue(status.sentence().contains("is present"), status.sentence());
        assertTrue(status.sentence().contains("no RDMA device was found"), status.sentence());
        VerbsException e = assertThrows(VerbsException.class, RdmaContext::openFirst);
        assertTrue(e.getMessage().contains("no RDMA device was found"), e.getMessage());
        assertThrows(VerbsException.class, () -> RdmaContext.open("mlx5_0"));
    }

    @Test
    void statusAndListAgree() {
        VerbsStatus status = Verbs.status();
        List<RdmaDevice> devices = RdmaDevices.list();
        assertEquals(status.deviceCount(), devices.size(), status::sentence);
        for (int i = 0; i < devices.size(); i++) {
            assertEquals(status.deviceNames().get(i), devices.get(i).name());
        }
        assertEquals(status.kind() != VerbsStatus.Kind.LIBRARY_ABSENT, LibIbverbs.isAvailable(), status::sentence);
    }

    @Test
    void optionalSymbolsResolveWithRdmaCore34OrNewer() {
        assumeTrue(LibIbverbs.isAvailable(), () -> "libibverbs is absent: " + LibIbverbs.unavailableReason());
        assertTrue(LibIbverbs.RegMrIova2.isAvailable(), LibIbverbs.RegMrIova2::unavailableReason);
        assertTrue(LibIbverbs.RegDmabufMr.isAvailable(), LibIbverbs.RegDmabufMr::unavailableReason);
    }

    /**
     * Loads the bindings in a fresh JVM pointed at libraries that do not exist, so that class initialisation itself
     * runs without them: nothing may throw, and every entry point must say why.
     */
    @Test
    void classLoadingWithoutTheLibrariesNeverThrows() throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process process = new ProcessBuilder(java.toString(), "--enable-native-access=ALL-UNNAMED", "-cp",
                io.gda4j.bootstrap.ChildJvm.classPath(),
                "-D" + LibIbverbs.LIBRARY_PROP_NAME + "=" + ABSENT_LIBRARY,
                "-D" + LibMlx5.LIBRARY_PROP_NAME + "=libmlx5-gda4j-test-absent.so.1",
                AbsentLibraryMain.class.getName()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "child JVM did not finish");
        assertEquals(0, process.exitValue(), output);
        assertTrue(output.contains("ibverbs available=false"), output);
        assertTrue(output.contains("mlx5 available=false"), output);
        assertTrue(output.contains("devices=[]"), output);
        assertTrue(output.contains("kind=LIBRARY_ABSENT"), output);
        assertTrue(output.contains("open: RDMA verbs: " + ABSENT_LIBRARY + " was not found"), output);
        assertTrue(output.contains("optional: libibverbs is not usable"), output);
    }
}
