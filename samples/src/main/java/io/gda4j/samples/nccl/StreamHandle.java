package io.gda4j.samples.nccl;

import io.gda4j.cuda.CudaStream;

import jcuda.driver.CUstream;
import jcuda.runtime.cudaStream_t;

/**
 * The native {@code cudaStream_t} of a JCuda stream, for NCCL: JCuda hides a handle's pointer behind a protected
 * getter, which a subclass may call on itself ({@code cudaStream_t(CUstream)} copies the pointer into it). A driver
 * {@code CUstream} and a runtime {@code cudaStream_t} are the same pointer.
 */
final class StreamHandle extends cudaStream_t {
    private StreamHandle(CUstream stream) {
        super(stream);
    }

    static long of(CudaStream stream) {
        return new StreamHandle(stream.handle()).getNativePointer();
    }
}
