package io.gda4j.cuda;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** Runs everywhere: the probe must never throw, with or without a driver. */
class CudaStatusTest {

    @Test
    void statusNeverThrowsAndExplainsItself() {
        CudaStatus status = assertDoesNotThrow(Cuda::status);
        assertNotNull(status.reason());
        assertFalse(status.reason().isBlank(), "a status always carries a human reason");
        assertSame(status, Cuda.status(), "probed once, cached");
        if (!status.available()) {
            assertEquals(0, status.deviceCount());
            assertEquals(0, Cuda.deviceCount());
        } else {
            assertTrue(status.deviceCount() > 0);
        }
    }

    @Test
    void requireAvailableThrowsWithTheReasonWhenUnavailable() {
        CudaStatus status = Cuda.status();
        Assumptions.assumeFalse(status.available(), "CUDA is available here: " + status.reason());
        CudaUnavailableException e = assertThrows(CudaUnavailableException.class, Cuda::requireAvailable);
        assertEquals(status.reason(), e.reason());
        assertTrue(e.getMessage().contains(status.reason()), e.getMessage());
        assertThrows(CudaUnavailableException.class, () -> Cuda.device(0));
    }

    @Test
    void requireAvailablePassesWhenAvailable() {
        Assumptions.assumeTrue(Cuda.status().available(), "no CUDA: " + Cuda.status().reason());
        assertDoesNotThrow(Cuda::requireAvailable);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Cuda.device(Cuda.deviceCount()));
        assertTrue(e.getMessage().contains("this machine has " + Cuda.deviceCount()), e.getMessage());
    }

    @Test
    void driverVersionFormatting() {
        assertEquals("13.0", Cuda.formatDriverVersion(13000));
        assertEquals("12.6", Cuda.formatDriverVersion(12060));
        assertEquals("unknown", Cuda.formatDriverVersion(0));
        assertNotNull(Cuda.driverVersionString());
    }

    @Test
    void missingDriverIsNamedPlainly() {
        String reason = Cuda.linkFailureReason(new UnsatisfiedLinkError(
                "Error while loading native library \"JCudaDriver-12.6.0-linux-x86_64\"\n"
                        + "java.lang.UnsatisfiedLinkError: /tmp/libJCudaDriver.so: libcuda.so.1: cannot open shared"
                        + " object file: No such file or directory"));
        assertEquals("libcuda.so.1 (the NVIDIA driver) was not found: no CUDA driver on this machine", reason);

        String other = Cuda.linkFailureReason(new UnsatisfiedLinkError(
                "Error while loading\njava.lang.UnsatisfiedLinkError: /tmp/x.so: undefined symbol: cuFoo"));
        assertTrue(other.contains("undefined symbol: cuFoo"), other);
    }

    /** Without JCuda's natives (the class path) or with them in a module of their own (the module path). */
    @Test
    void missingNativesSayWhereToPutThem() {
        UnsatisfiedLinkError e = new UnsatisfiedLinkError("Error while loading native library \"JCudaDriver-12.6.0"
                + "-linux-x86_64\"\nStack trace from the attempt to load the library as a resource:\n"
                + "java.io.IOException: No resource found with name '/lib/libJCudaDriver-12.6.0-linux-x86_64.so'");
        String onModulePath = Cuda.linkFailureReason(e, true);
        assertTrue(onModulePath.endsWith("--patch-module jcuda=jcuda-natives-" + Cuda.bindingVersion()
                + "-linux-x86_64.jar"), onModulePath);
        String onClassPath = Cuda.linkFailureReason(e, false);
        assertTrue(onClassPath.contains("is not on the class path"), onClassPath);
    }
}
