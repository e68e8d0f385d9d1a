package io.gda4j.cuda;

import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/**
 * The driver calls code outside this package makes where it decides itself what a failure means: one call per
 * method on this package's types, returning the {@code CUresult}, binding no context and allocating nothing, so the
 * host proxy's per-trigger path and the emulated NIC's engine keep their cost. Everything else calls the throwing
 * methods of {@link CudaStream}, {@link CudaEvent}, {@link Kernel} and {@link CudaContext}. This package is the one
 * that calls JCuda.
 */
public final class Driver {
    public static final int SUCCESS = CUresult.CUDA_SUCCESS;
    public static final int NOT_READY = CUresult.CUDA_ERROR_NOT_READY;
    public static final int INVALID_VALUE = CUresult.CUDA_ERROR_INVALID_VALUE;
    public static final int NOT_SUPPORTED = CUresult.CUDA_ERROR_NOT_SUPPORTED;
    public static final int DEINITIALIZED = CUresult.CUDA_ERROR_DEINITIALIZED;
    public static final int HOST_MEMORY_ALREADY_REGISTERED = CUresult.CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;

    private Driver() {
    }

    /** The result's name, e.g. {@code CUDA_ERROR_INVALID_VALUE}. */
    public static String name(int result) {
        return CUresult.stringFor(result);
    }

    /** {@code cuCtxSetCurrent}: makes {@code context} current on this thread. */
    public static int makeCurrent(CudaContext context) {
        return JCudaDriver.cuCtxSetCurrent(context.handle());
    }

    /** {@code cuMemcpyPeerAsync} on {@code stream}. */
    public static int copyPeerAsync(DevicePointer dst, CudaContext dstContext, DevicePointer src,
                                    CudaContext srcContext, long bytes, CudaStream stream) {
        return JCudaDriver.cuMemcpyPeerAsync(dst, dstContext.handle(), src, srcContext.handle(), bytes,
                stream.handle());
    }

    /** {@link #copyPeerAsync} between addresses a hot loop rewrites ({@link MutableDevicePointer#set}). */
    public static int copyPeerAsync(MutableDevicePointer dst, CudaContext dstContext, MutableDevicePointer src,
                                    CudaContext srcContext, long bytes, CudaStream stream) {
        return JCudaDriver.cuMemcpyPeerAsync(dst, dstContext.handle(), src, srcContext.handle(), bytes,
                stream.handle());
    }

    /** {@code cuMemcpyDtoDAsync} on {@code stream}. */
    public static int copyDeviceToDeviceAsync(DevicePointer dst, DevicePointer src, long bytes, CudaStream stream) {
        return JCudaDriver.cuMemcpyDtoDAsync(dst, src, bytes, stream.handle());
    }

    /** {@link #copyDeviceToDeviceAsync} between addresses a hot loop rewrites. */
    public static int copyDeviceToDeviceAsync(MutableDevicePointer dst, MutableDevicePointer src, long bytes,
                                              CudaStream stream) {
        return JCudaDriver.cuMemcpyDtoDAsync(dst, src, bytes, stream.handle());
    }

    /** {@code cuMemcpyAsync} (unified addressing: device, peer or mapped host memory) on {@code stream}. */
    public static int copyAsync(DevicePointer dst, DevicePointer src, long bytes, CudaStream stream) {
        return JCudaDriver.cuMemcpyAsync(dst, src, bytes, stream.handle());
    }

    /** {@code cuMemsetD8Async} on {@code stream}. */
    public static int setAsync(DevicePointer dst, byte value, long bytes, CudaStream stream) {
        return JCudaDriver.cuMemsetD8Async(dst, value, bytes, stream.handle());
    }

    /** {@code cuMemcpyDtoHAsync} into {@code dst} on {@code stream}; synchronize before reading it. */
    public static int copyToHostAsync(byte[] dst, MutableDevicePointer src, long bytes, CudaStream stream) {
        return JCudaDriver.cuMemcpyDtoHAsync(jcuda.Pointer.to(dst), src, bytes, stream.handle());
    }

    /** {@code cuMemcpyHtoDAsync} from {@code src} on {@code stream}; keep it unchanged until the stream is done. */
    public static int copyFromHostAsync(MutableDevicePointer dst, byte[] src, long bytes, CudaStream stream) {
        return JCudaDriver.cuMemcpyHtoDAsync(dst, jcuda.Pointer.to(src), bytes, stream.handle());
    }

    /** {@code cuStreamSynchronize}. */
    public static int synchronize(CudaStream stream) {
        return JCudaDriver.cuStreamSynchronize(stream.handle());
    }

    /** {@code cuStreamQuery}: {@link #SUCCESS} when done, {@link #NOT_READY} while work is queued. */
    public static int query(CudaStream stream) {
        return JCudaDriver.cuStreamQuery(stream.handle());
    }

    /** {@code cuEventRecord} of {@code event} on {@code stream}. */
    public static int record(CudaEvent event, CudaStream stream) {
        return JCudaDriver.cuEventRecord(event.handle(), stream.handle());
    }

    /** {@code cuStreamWaitEvent}: later work on {@code stream} waits for {@code event}'s latest record. */
    public static int waitEvent(CudaStream stream, CudaEvent event) {
        return JCudaDriver.cuStreamWaitEvent(stream.handle(), event.handle(), 0);
    }

    /** {@code cuStreamWriteValue64} of {@code value} to {@code address} on {@code stream}. */
    public static int writeValue64(CudaStream stream, DevicePointer address, long value) {
        return JCudaDriver.cuStreamWriteValue64(stream.handle(), address, value, 0);
    }

    /** {@link #writeValue64} to an address a hot loop rewrites. */
    public static int writeValue64(CudaStream stream, MutableDevicePointer address, long value) {
        return JCudaDriver.cuStreamWriteValue64(stream.handle(), address, value, 0);
    }

    /**
     * {@code cuPointerSetAttribute(CU_POINTER_ATTRIBUTE_SYNC_MEMOPS = 1)} on the allocation holding {@code address},
     * in the current context: synchronous memory operations on it complete before they return (what a NIC reading
     * the memory through nvidia-peermem needs).
     */
    public static int setSyncMemops(DevicePointer address) {
        return JCudaDriver.cuPointerSetAttribute(jcuda.Pointer.to(new int[] {1}),
                jcuda.driver.CUpointer_attribute.CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, address);
    }

    /** {@code cuLaunchKernel} of one thread (grid and block 1 x 1 x 1, no shared memory) on {@code stream}. */
    public static int launchOneThread(Kernel kernel, CudaStream stream, KernelParameters parameters) {
        return JCudaDriver.cuLaunchKernel(kernel.handle(), 1, 1, 1, 1, 1, 1, 0, stream.handle(),
                parameters.pointer(), null);
    }
}
