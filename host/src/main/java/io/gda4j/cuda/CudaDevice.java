package io.gda4j.cuda;

import java.nio.charset.StandardCharsets;

import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_P2PAttribute;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUuuid;
import jcuda.driver.JCudaDriver;

/**
 * One GPU as the CUDA driver sees it: identity (name, PCI bus id, UUID), capabilities and peer relations.
 * Obtain it with {@link Cuda#device(int)}; there is one instance per ordinal. It owns nothing; contexts come from
 * {@link #primaryContext()}.
 */
public final class CudaDevice {
    /**
     * How long {@link #requireNoRunningKernels} waits for running kernels to end before it refuses: far longer than
     * a kernel that ends on its own takes (microseconds to milliseconds, more where other processes share the GPU),
     * far shorter than the device-side wait timeout of one that spins until this thread acts.
     */
    public static final long BUSY_GRACE_MILLIS = 1000;
    private static final long BUSY_GRACE_NANOS = BUSY_GRACE_MILLIS * 1_000_000L;

    private final int ordinal;
    private final CUdevice handle = new CUdevice();
    private final String name;
    private final long totalMemoryBytes;
    private final String pciBusId;
    private final String uuid;
    private final int computeCapabilityMajor;
    private final int computeCapabilityMinor;
    private final int multiprocessorCount;
    /** Kernels launched on this GPU through any context owner: ranks sharing the GPU share its context. */
    private final LaunchTracker launches = new LaunchTracker();

    CudaDevice(int ordinal) {
        this.ordinal = ordinal;
        Cuda.check(JCudaDriver.cuDeviceGet(handle, ordinal), "cuDeviceGet(" + ordinal + ")");
        // Fixed facts are read once: they are cheap, never change, and logs print them often.
        byte[] nameBytes = new byte[256];
        Cuda.check(JCudaDriver.cuDeviceGetName(nameBytes, nameBytes.length, handle), "cuDeviceGetName(" + this + ")");
        this.name = cString(nameBytes);
        long[] total = {0};
        Cuda.check(JCudaDriver.cuDeviceTotalMem(total, handle), "cuDeviceTotalMem(" + this + ")");
        this.totalMemoryBytes = total[0];
        String[] busId = {null};
        Cuda.check(JCudaDriver.cuDeviceGetPCIBusId(busId, 64, handle), "cuDeviceGetPCIBusId(" + this + ")");
        this.pciBusId = busId[0] == null ? "" : busId[0].trim();
        CUuuid raw = new CUuuid();
        Cuda.check(JCudaDriver.cuDeviceGetUuid(raw, handle), "cuDeviceGetUuid(" + this + ")");
        this.uuid = formatUuid(raw.bytes);
        this.computeCapabilityMajor = attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
        this.computeCapabilityMinor = attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
        this.multiprocessorCount = attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    }

    /** The CUDA ordinal (after CUDA_VISIBLE_DEVICES). */
    public int ordinal() {
        return ordinal;
    }

    /** The marketing name, e.g. "NVIDIA H200". */
    public String name() {
        return name;
    }

    /** Total device memory in bytes. */
    public long totalMemoryBytes() {
        return totalMemoryBytes;
    }

    /** The PCI address, e.g. "0000:19:00.0"; identifies the GPU across processes and tools. */
    public String pciBusId() {
        return pciBusId;
    }

    /** The GPU UUID as nvidia-smi prints it, e.g. "GPU-1b2c3d4e-...": stable across CUDA_VISIBLE_DEVICES. */
    public String uuid() {
        return uuid;
    }

    /** Compute capability major version (9 for H100/H200). */
    public int computeCapabilityMajor() {
        return computeCapabilityMajor;
    }

    /** Compute capability minor version (0 for H100/H200). */
    public int computeCapabilityMinor() {
        return computeCapabilityMinor;
    }

    /** The number of streaming multiprocessors. */
    public int multiprocessorCount() {
        return multiprocessorCount;
    }

    /**
     * Any device attribute.
     *
     * @param cuDeviceAttribute a {@link CUdevice_attribute} constant
     */
    public int attribute(int cuDeviceAttribute) {
        int[] value = {0};
        Cuda.check(JCudaDriver.cuDeviceGetAttribute(value, cuDeviceAttribute, handle),
                "cuDeviceGetAttribute(" + CUdevice_attribute.stringFor(cuDeviceAttribute) + ", " + this + ")");
        return value[0];
    }

    /** {@code CU_GPU_DIRECT_RDMA_WRITES_ORDERING_OWNER}: the GPU's own kernels see GPUDirect RDMA writes in order. */
    public static final int GPU_DIRECT_RDMA_WRITES_ORDERING_OWNER = 100;

    /**
     * How this GPU orders GPUDirect RDMA writes ({@code CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING}): 0 none,
     * {@link #GPU_DIRECT_RDMA_WRITES_ORDERING_OWNER} for its own kernels, more for every device.
     */
    public int gpuDirectRdmaWritesOrdering() {
        return attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING);
    }

    /** Whether this GPU's memory can be exported as a dma-buf ({@code CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED}). */
    public boolean dmaBufSupported() {
        return attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED) != 0;
    }

    /** Whether this GPU can map {@code other}'s memory (NVLink or PCIe P2P); false for the same GPU. */
    public boolean canAccessPeer(CudaDevice other) {
        if (other == this) {
            return false;
        }
        int[] can = {0};
        Cuda.check(JCudaDriver.cuDeviceCanAccessPeer(can, handle, other.handle),
                "cuDeviceCanAccessPeer(" + this + " -> " + other + ")");
        return can[0] != 0;
    }

    /**
     * The driver's relative rank of the link from this GPU to {@code other} (lower is better).
     *
     * @throws IllegalArgumentException when {@code other} is this GPU
     */
    public int p2pPerformanceRank(CudaDevice other) {
        return p2pAttribute(other, CUdevice_P2PAttribute.CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK,
                "PERFORMANCE_RANK");
    }

    /**
     * Whether atomics over the link to {@code other} are native (NVLink) rather than unsupported or emulated.
     *
     * @throws IllegalArgumentException when {@code other} is this GPU
     */
    public boolean nativeAtomicsWith(CudaDevice other) {
        return p2pAttribute(other, CUdevice_P2PAttribute.CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED,
                "NATIVE_ATOMIC_SUPPORTED") != 0;
    }

    /**
     * Retains this GPU's primary context (the one the CUDA runtime and other libraries share). Each call returns
     * a new owner; each owner releases its retain when closed, and the context lives while any owner is open.
     */
    public CudaContext primaryContext() {
        Cuda.requireAvailable();
        CUcontext context = new CUcontext();
        Cuda.check(JCudaDriver.cuDevicePrimaryCtxRetain(context, handle), "cuDevicePrimaryCtxRetain(" + this + ")");
        return new CudaContext(this, context);
    }

    /**
     * Whether a kernel launched through gda4j ({@link Kernel#launch}) on this GPU, from any context owner, may still
     * be running. A non-blocking query of each stream that launched one ({@code cuStreamQuery}).
     */
    public boolean kernelsMayBeRunning() {
        return launches.firstRunning() != null;
    }

    /**
     * Refuses {@code operation}, a call that can wait for work running in this GPU's context, while a kernel launched
     * through gda4j on this GPU still runs after {@value #BUSY_GRACE_MILLIS} ms of (non-blocking) queries. The calls
     * that can wait (module and kernel loading, memory allocation) call this first; see the package documentation for
     * the rule.
     *
     * @param operation the call, as it should appear in the message, e.g. {@code "loading PTX module bench"}
     * @throws ContextBusyException naming the operation and the stream whose kernel has not finished
     */
    public void requireNoRunningKernels(String operation) {
        CudaStream running = launches.runningAfter(BUSY_GRACE_NANOS);
        if (running != null) {
            throw new ContextBusyException(operation, this, running);
        }
    }

    /** Where {@link Kernel} records its launches. */
    LaunchTracker launches() {
        return launches;
    }

    /** The JCuda handle, for driver calls this class does not wrap. */
    public CUdevice handle() {
        return handle;
    }

    @Override
    public String toString() {
        return "GPU " + ordinal + (name == null ? "" : " (" + name + ")");
    }

    private int p2pAttribute(CudaDevice other, int attribute, String attributeName) {
        if (other == this) {
            throw new IllegalArgumentException("P2P attribute " + attributeName + " needs two different GPUs; both are "
                    + this);
        }
        int[] value = {0};
        Cuda.check(JCudaDriver.cuDeviceGetP2PAttribute(value, attribute, handle, other.handle),
                "cuDeviceGetP2PAttribute(" + attributeName + ", " + this + " -> " + other + ")");
        return value[0];
    }

    private static String cString(byte[] bytes) {
        int length = 0;
        while (length < bytes.length && bytes[length] != 0) {
            length++;
        }
        return new String(bytes, 0, length, StandardCharsets.UTF_8).trim();
    }

    /** nvidia-smi's form: "GPU-" then 8-4-4-4-12 lowercase hex digits. */
    static String formatUuid(byte[] bytes) {
        StringBuilder text = new StringBuilder("GPU-");
        for (int i = 0; i < bytes.length; i++) {
            if (i == 4 || i == 6 || i == 8 || i == 10) {
                text.append('-');
            }
            text.append(Character.forDigit((bytes[i] >> 4) & 0xf, 16)).append(Character.forDigit(bytes[i] & 0xf, 16));
        }
        return text.toString();
    }
}
