package io.gda4j.cuda;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;

/**
 * An owner of one retain of a GPU's primary context, and the factory for everything that lives in it: device
 * memory, mapped host memory, streams, events and PTX modules.
 *
 * <p>Every method makes the context current on the calling thread first, so any thread may use it. Closing it
 * closes what was created from it and is still open (newest first), then releases the retain; closing twice does
 * nothing. Other owners of the same primary context (see {@link CudaDevice#primaryContext()}) are unaffected.
 */
public final class CudaContext implements AutoCloseable {
    private final CudaDevice device;
    private final CUcontext handle;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Open resources created here, in creation order; guarded by itself. */
    private final Set<AutoCloseable> children = new LinkedHashSet<>();

    CudaContext(CudaDevice device, CUcontext handle) {
        this.device = device;
        this.handle = handle;
    }

    /** The GPU this context belongs to. */
    public CudaDevice device() {
        return device;
    }

    /** The JCuda handle, for driver calls this class does not wrap. */
    public CUcontext handle() {
        return handle;
    }

    /** Whether {@link #close()} has been called. */
    public boolean isClosed() {
        return closed.get();
    }

    /** Makes this context current on the calling thread ({@code cuCtxSetCurrent}; cheap when it already is). */
    public void makeCurrent() {
        ensureOpen();
        bind();
    }

    /**
     * Waits until all work in this context, on every stream, has finished. Never call it while a kernel of a rank on
     * this GPU may wait for something this thread has yet to do: ranks on one GPU share this context, so it would
     * wait forever. Synchronize the streams you need instead.
     */
    public void synchronize() {
        makeCurrent();
        Cuda.check(JCudaDriver.cuCtxSynchronize(), "cuCtxSynchronize(" + device + ")");
    }

    /**
     * Lets kernels in this context load and store {@code peer}'s memory. Already-enabled access and a peer on the
     * same GPU are not errors: there is nothing to do.
     *
     * @throws CudaException when the GPUs cannot access each other (CUDA_ERROR_PEER_ACCESS_UNSUPPORTED)
     */
    public void enablePeerAccess(CudaContext peer) {
        peer.ensureOpen();
        if (peer.device == device) {
            return;
        }
        makeCurrent();
        int result = JCudaDriver.cuCtxEnablePeerAccess(peer.handle, 0);
        if (result != CUresult.CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) {
            Cuda.check(result, "cuCtxEnablePeerAccess(" + device + " -> " + peer.device + ")");
        }
    }

    /**
     * Allocates device memory ({@code cuMemAlloc}); its contents are undefined until written.
     *
     * @param sizeBytes how many bytes, at least 1
     */
    public DeviceMemory allocate(long sizeBytes) {
        requirePositiveSize(sizeBytes, "device memory");
        makeCurrent();
        device.requireNoRunningKernels("allocating " + sizeBytes + " bytes of device memory (cuMemAlloc)");
        CUdeviceptr raw = new CUdeviceptr();
        Cuda.check(JCudaDriver.cuMemAlloc(raw, sizeBytes),
                "cuMemAlloc(" + sizeBytes + " bytes on GPU " + device.ordinal() + ")");
        return adopt(new DeviceMemory(this, DevicePointer.wrap(raw), sizeBytes));
    }

    /**
     * Allocates pinned host memory mapped into the GPU's address space (portable to every context), zeroed. The
     * JVM and kernels share words in it; see {@link MappedHostMemory} for the ordering contract.
     *
     * @param sizeBytes how many bytes, 1 to {@link Integer#MAX_VALUE} (a ByteBuffer's limit)
     */
    public MappedHostMemory allocateMappedHost(long sizeBytes) {
        requirePositiveSize(sizeBytes, "mapped host memory");
        if (sizeBytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("mapped host memory of " + sizeBytes
                    + " bytes is larger than a ByteBuffer can address (" + Integer.MAX_VALUE + " bytes): allocate"
                    + " several smaller regions");
        }
        makeCurrent();
        device.requireNoRunningKernels("allocating " + sizeBytes + " bytes of mapped pinned host memory (cuMemHostAlloc)");
        Pointer host = new Pointer();
        // Not write-combined: the host reads flags from this memory, and WC reads are uncached and slow.
        Cuda.check(JCudaDriver.cuMemHostAlloc(host, sizeBytes,
                        JCudaDriver.CU_MEMHOSTALLOC_DEVICEMAP | JCudaDriver.CU_MEMHOSTALLOC_PORTABLE),
                "cuMemHostAlloc(" + sizeBytes + " bytes, DEVICEMAP|PORTABLE, for GPU " + device.ordinal() + ")");
        try {
            CUdeviceptr raw = new CUdeviceptr();
            Cuda.check(JCudaDriver.cuMemHostGetDevicePointer(raw, host, 0),
                    "cuMemHostGetDevicePointer(" + sizeBytes + " bytes of mapped host memory, GPU " + device.ordinal()
                            + ")");
            return adopt(new MappedHostMemory(this, host, DevicePointer.wrap(raw), sizeBytes));
        } catch (RuntimeException e) {
            JCudaDriver.cuMemFreeHost(host); // best effort: the original failure is the one to report
            throw e;
        }
    }

    /**
     * Maps another process's device allocation, published as a CUDA IPC handle ({@link DeviceMemory#exportIpcHandle}),
     * into this context; closing this context (or the returned mapping) unmaps it.
     *
     * @param handle    the {@link IpcMemory#HANDLE_BYTES} bytes of the exporter's handle
     * @param sizeBytes the allocation's size, as the exporter published it
     * @param label     what the memory is, for messages ("rank 1's heap")
     */
    public IpcMemory openIpcMemory(byte[] handle, long sizeBytes, String label) {
        requirePositiveSize(sizeBytes, "IPC memory");
        makeCurrent();
        device.requireNoRunningKernels("mapping " + label + " (cuIpcOpenMemHandle)");
        return adopt(IpcMemory.open(this, handle, sizeBytes, label));
    }

    /**
     * Reads the native-order 64-bit word at {@code address}, wherever this GPU can address it (device memory of any
     * allocation, mapped host memory, peer memory with access enabled): a synchronous 8-byte {@code cuMemcpyDtoH}.
     * It does not wait for work on non-blocking streams, so it sees what has landed when it runs.
     */
    public long readLong(DevicePointer address) {
        makeCurrent();
        long[] value = {0};
        Cuda.check(JCudaDriver.cuMemcpyDtoH(Pointer.to(value), address, Long.BYTES),
                "cuMemcpyDtoH(8 bytes at " + address + " on " + device + ")");
        return value[0];
    }

    /** Creates a stream that does not synchronise with the legacy default stream ({@code CU_STREAM_NON_BLOCKING}). */
    public CudaStream createStream() {
        return createStream("");
    }

    /**
     * Creates a non-blocking stream named {@code label} in messages (e.g. "rank 1 work stream"), so an error about
     * a running kernel says whose it is.
     */
    public CudaStream createStream(String label) {
        makeCurrent();
        CUstream stream = new CUstream();
        Cuda.check(JCudaDriver.cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING),
                "cuStreamCreate(NON_BLOCKING, " + device + ")");
        return adopt(new CudaStream(this, stream, label == null ? "" : label));
    }

    /**
     * Streams created here and still open. The driver spreads a context's streams over a few hardware work queues
     * ({@code CUDA_DEVICE_MAX_CONNECTIONS}, 8 unless set); streams that share one are served in order, so kernels
     * that wait for each other's streams must count them (io.gda4j.moe.MoeBuffer does).
     */
    public int openStreams() {
        synchronized (children) {
            int n = 0;
            for (AutoCloseable c : children) {
                if (c instanceof CudaStream) {
                    n++;
                }
            }
            return n;
        }
    }

    /** Creates an event with default flags, so {@link CudaEvent#elapsedMillisSince(CudaEvent)} works. */
    public CudaEvent createEvent() {
        makeCurrent();
        CUevent event = new CUevent();
        Cuda.check(JCudaDriver.cuEventCreate(event, CUevent_flags.CU_EVENT_DEFAULT),
                "cuEventCreate(DEFAULT, " + device + ")");
        return adopt(new CudaEvent(this, event));
    }

    /**
     * Creates an event without timing ({@code CU_EVENT_DISABLE_TIMING}): cheaper to record, for ordering one stream
     * behind another ({@code cuStreamWaitEvent}). {@link CudaEvent#elapsedMillisSince(CudaEvent)} fails on it.
     */
    public CudaEvent createOrderingEvent() {
        makeCurrent();
        CUevent event = new CUevent();
        Cuda.check(JCudaDriver.cuEventCreate(event, CUevent_flags.CU_EVENT_DISABLE_TIMING),
                "cuEventCreate(DISABLE_TIMING, " + device + ")");
        return adopt(new CudaEvent(this, event));
    }

    /**
     * Loads the PTX shipped as the class-path resource {@code io/gda4j/ptx/<ptxName>.ptx}, with every kernel it
     * declares resolved at once (see {@link PtxModule}).
     *
     * @param ptxName the module name, e.g. {@code "p2p_bench"}
     * @throws ContextBusyException when a kernel launched on this GPU may still be running: loading waits for it
     */
    public PtxModule loadModule(String ptxName) {
        return loadModule(ModuleImage.resource(ptxName));
    }

    /**
     * Loads a module image (PTX text or a cubin; from a file, bytes or a class-path resource of your choosing), with
     * every kernel its PTX declares resolved at once.
     *
     * @throws ContextBusyException when a kernel launched on this GPU may still be running: loading waits for it
     */
    public PtxModule loadModule(ModuleImage image) {
        makeCurrent();
        device.requireNoRunningKernels("loading module " + image.name() + " (cuModuleLoadData)");
        return adopt(PtxModule.load(this, image));
    }

    /**
     * Closes the resources created here that are still open, newest first, then releases this owner's retain of
     * the primary context. Idempotent. If several closes fail, the first failure is thrown with the others
     * suppressed.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        List<AutoCloseable> open;
        synchronized (children) {
            open = new ArrayList<>(children);
            children.clear();
        }
        RuntimeException failure = null;
        for (int i = open.size() - 1; i >= 0; i--) {
            try {
                open.get(i).close();
            } catch (Exception e) {
                failure = accumulate(failure, e);
            }
        }
        int result = JCudaDriver.cuDevicePrimaryCtxRelease(device.handle());
        if (result != CUresult.CUDA_SUCCESS && result != CUresult.CUDA_ERROR_DEINITIALIZED) {
            failure = accumulate(failure, new CudaException(result, "cuDevicePrimaryCtxRelease(" + device + ")"));
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public String toString() {
        return "CudaContext[" + device + (closed.get() ? ", closed" : "") + "]";
    }

    /** Makes the context current without the open check: children call it while the context closes them. */
    void bind() {
        int result = JCudaDriver.cuCtxSetCurrent(handle);
        if (result != CUresult.CUDA_SUCCESS) {
            Cuda.check(result, "cuCtxSetCurrent(" + device + ")");
        }
    }

    /** Children tell the context they are gone so it will not close them again. */
    void forget(AutoCloseable child) {
        synchronized (children) {
            children.remove(child);
        }
    }

    void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException(this + " is closed: create a new one with CudaDevice.primaryContext()");
        }
    }

    private <T extends AutoCloseable> T adopt(T child) {
        synchronized (children) {
            if (!closed.get()) {
                children.add(child);
                return child;
            }
        }
        // The context was closed while the child was being created: free it rather than leak it.
        try {
            child.close();
        } catch (Exception e) {
            // the IllegalStateException below is what the caller needs to see
        }
        throw new IllegalStateException(this + " was closed while a resource was being created in it");
    }

    private static RuntimeException accumulate(RuntimeException failure, Exception next) {
        if (failure == null) {
            return next instanceof RuntimeException ? (RuntimeException) next : new IllegalStateException(next);
        }
        failure.addSuppressed(next);
        return failure;
    }

    private static void requirePositiveSize(long sizeBytes, String what) {
        if (sizeBytes <= 0) {
            throw new IllegalArgumentException(what + " size must be at least 1 byte, got " + sizeBytes);
        }
    }
}
