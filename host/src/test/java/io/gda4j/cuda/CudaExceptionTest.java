package io.gda4j.cuda;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jcuda.driver.CUresult;
import org.junit.jupiter.api.Test;

class CudaExceptionTest {

    @Test
    void messageNamesOperationErrorAndCode() {
        CudaException e = new CudaException(CUresult.CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc(268435456 bytes on GPU 0)");
        assertEquals(2, e.result());
        assertEquals("CUDA_ERROR_OUT_OF_MEMORY", e.errorName());
        assertEquals("cuMemAlloc(268435456 bytes on GPU 0)", e.operation());
        assertTrue(e.getMessage().startsWith(
                "cuMemAlloc(268435456 bytes on GPU 0) failed: CUDA_ERROR_OUT_OF_MEMORY (2)"), e.getMessage());
        assertTrue(e.getMessage().contains("allocate less"), "carries the hint: " + e.getMessage());
    }

    @Test
    void explicitHintAndNoHint() {
        assertEquals("op failed: CUDA_ERROR_INVALID_VALUE (1)", new CudaException(1, "op", "").getMessage());
        assertEquals("op failed: CUDA_ERROR_INVALID_VALUE (1); do this",
                new CudaException(1, "op", "do this").getMessage());
    }

    @Test
    void unknownCodesKeepTheirNumber() {
        CudaException e = new CudaException(123456, "cuSomething()");
        assertEquals("UNRECOGNIZED_CURESULT", e.errorName());
        assertTrue(e.getMessage().contains("(123456)"), e.getMessage());
    }

    @Test
    void aQueryIsDoneNotYetOrAnError() {
        assertTrue(Cuda.isDone(CUresult.CUDA_SUCCESS, "cuEventQuery(e)"));
        assertEquals(false, Cuda.isDone(CUresult.CUDA_ERROR_NOT_READY, "cuEventQuery(e)"));
        CudaException e = assertThrows(CudaException.class,
                () -> Cuda.isDone(CUresult.CUDA_ERROR_LAUNCH_FAILED, "cuStreamQuery(s)"));
        assertEquals("cuStreamQuery(s)", e.operation());
        assertEquals(CUresult.CUDA_ERROR_LAUNCH_FAILED, e.result());
    }

    @Test
    void checkIsTheChokePoint() {
        assertDoesNotThrow(() -> Cuda.check(CUresult.CUDA_SUCCESS, "cuFine()"));
        CudaException e = assertThrows(CudaException.class,
                () -> Cuda.check(CUresult.CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "cuCtxEnablePeerAccess(GPU 0 -> GPU 1)"));
        assertTrue(e.getMessage().startsWith(
                "cuCtxEnablePeerAccess(GPU 0 -> GPU 1) failed: CUDA_ERROR_PEER_ACCESS_UNSUPPORTED (217)"),
                e.getMessage());
    }

    @Test
    void unavailableCarriesReason() {
        CudaUnavailableException e = new CudaUnavailableException("no driver here");
        assertEquals("no driver here", e.reason());
        assertTrue(e.getMessage().contains("no driver here"));
    }
}
