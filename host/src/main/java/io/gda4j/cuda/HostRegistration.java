package io.gda4j.cuda;

import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;

/**
 * Host memory made visible to a GPU ({@code cuMemHostRegister}): pages another component allocated (a NIC's rings, a
 * peer's shared memory), which the GPU then reaches at {@link #devicePointer}. The caller keeps the bookkeeping (who
 * registered which pages) and decides what a refusal means: the register and unregister calls return their CUresult.
 */
public final class HostRegistration {
    /** {@code CU_MEMHOSTREGISTER_PORTABLE}: every context may use the registration. */
    public static final int PORTABLE = JCudaDriver.CU_MEMHOSTREGISTER_PORTABLE;
    /** {@code CU_MEMHOSTREGISTER_DEVICEMAP}: mapped into the GPU's address space. */
    public static final int DEVICEMAP = JCudaDriver.CU_MEMHOSTREGISTER_DEVICEMAP;
    /** {@code CU_MEMHOSTREGISTER_IOMEMORY}: device I/O memory (a NIC's doorbell page), not RAM. */
    public static final int IOMEMORY = JCudaDriver.CU_MEMHOSTREGISTER_IOMEMORY;

    private HostRegistration() {
    }

    /** {@code cuMemHostRegister(start, lengthBytes, flags)} with {@code gpu} current; returns the CUresult. */
    public static int register(CudaContext gpu, long start, long lengthBytes, int flags) {
        gpu.makeCurrent();
        return JCudaDriver.cuMemHostRegister(new HostAddress(start), lengthBytes, flags);
    }

    /** {@code cuMemHostUnregister(start)} with {@code gpu} current; returns the CUresult. */
    public static int unregister(CudaContext gpu, long start) {
        gpu.makeCurrent();
        return JCudaDriver.cuMemHostUnregister(new HostAddress(start));
    }

    /**
     * Where {@code gpu} reaches the registered host address {@code start} ({@code cuMemHostGetDevicePointer}).
     *
     * @throws CudaException naming {@code what} when the driver refuses
     */
    public static long devicePointer(CudaContext gpu, long start, String what) {
        gpu.makeCurrent();
        DeviceAddress out = new DeviceAddress();
        Cuda.check(JCudaDriver.cuMemHostGetDevicePointer(out, new HostAddress(start), 0), what);
        return out.address();
    }

    /** A host address as JCuda's {@link Pointer}: JCuda has no public factory for a raw address. */
    private static final class HostAddress extends Pointer {
        HostAddress(long address) {
            super(address);
        }
    }

    /** A device address the driver fills in; JCuda hides it, a subclass may read it. */
    private static final class DeviceAddress extends CUdeviceptr {
        long address() {
            return getNativePointer() + getByteOffset();
        }
    }
}
