package io.gda4j.world;

import jcuda.driver.JCudaDriver;

import static jcuda.driver.CUresult.CUDA_SUCCESS;

/**
 * For {@code io.gda4j.NativeBindingsTest} only: the world calling JCuda, using one of its constants (inlined, so
 * only the sources show it) and binding a libcuda entry point of its own, which its rules refuse.
 */
public final class LayeringFixtureCallsCuda {
    static final String LIBRARY = "libcuda.so.1";

    private LayeringFixtureCallsCuda() {
    }

    static boolean synchronize() {
        return JCudaDriver.cuCtxSynchronize() == CUDA_SUCCESS;
    }

    static native int cuMemAlloc(long[] pointer, long bytes);
}
