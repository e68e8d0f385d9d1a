package io.gda4j.cuda;

import java.lang.reflect.Field;
import java.util.concurrent.atomic.AtomicBoolean;

import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUipcMemHandle;
import jcuda.driver.CUipcMem_flags;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/**
 * Another process's device allocation, mapped into this context through a CUDA IPC handle
 * ({@code cuIpcOpenMemHandle}); {@link #close()} unmaps it ({@code cuIpcCloseMemHandle}). The memory stays the
 * exporter's: it lives until the exporter frees it, so the exporter must outlive every mapping (a world's close
 * barrier sees to that).
 *
 * <h2>Why legacy IPC handles</h2>
 * CUDA offers two ways to share device memory between processes: the legacy {@code cuIpcGetMemHandle} handle of a
 * {@code cuMemAlloc} allocation, and {@code cuMemCreate} with an exported POSIX file descriptor. A legacy handle is 64
 * plain bytes, so it travels over the TCP bootstrap with everything else a peer publishes. A file descriptor is only
 * meaningful in its own process: passing it needs a Unix socket with {@code SCM_RIGHTS} (or {@code pidfd_getfd} and
 * ptrace rights over the peer) beside the bootstrap, and the symmetric heaps are plain {@code cuMemAlloc}
 * allocations already. The limits of legacy handles do not bite here: a handle names a whole allocation (the heap is
 * one), and it cannot be opened in the process that exported it (a world never does: ranks of one process reach each
 * other through their contexts).
 */
public final class IpcMemory implements AutoCloseable {
    /** Bytes of a {@code CUipcMemHandle}. */
    public static final int HANDLE_BYTES = 64;

    private final CudaContext context;
    private final DevicePointer pointer;
    private final long sizeBytes;
    private final String label;
    private final AtomicBoolean closed = new AtomicBoolean();

    private IpcMemory(CudaContext context, DevicePointer pointer, long sizeBytes, String label) {
        this.context = context;
        this.pointer = pointer;
        this.sizeBytes = sizeBytes;
        this.label = label;
    }

    /** The IPC handle of {@code memory}, to publish to other processes ({@code cuIpcGetMemHandle}). */
    static byte[] export(DeviceMemory memory) {
        memory.context().makeCurrent();
        CUipcMemHandle handle = new CUipcMemHandle();
        Cuda.check(JCudaDriver.cuIpcGetMemHandle(handle, memory.pointer()), "cuIpcGetMemHandle(" + memory + ")");
        return handleBytes(handle).clone();
    }

    /**
     * Maps the allocation behind {@code handle} into {@code context}. Peer access between different GPUs is enabled
     * lazily by the driver ({@code CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS}).
     */
    static IpcMemory open(CudaContext context, byte[] handleBytes, long sizeBytes, String label) {
        if (handleBytes.length != HANDLE_BYTES) {
            throw new IllegalArgumentException("a CUDA IPC handle has " + HANDLE_BYTES + " bytes, not "
                    + handleBytes.length);
        }
        CUipcMemHandle handle = new CUipcMemHandle();
        System.arraycopy(handleBytes, 0, handleBytes(handle), 0, HANDLE_BYTES);
        CUdeviceptr raw = new CUdeviceptr();
        int result = JCudaDriver.cuIpcOpenMemHandle(raw, handle, CUipcMem_flags.CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
        if (result != CUresult.CUDA_SUCCESS) {
            throw new CudaException(result, "cuIpcOpenMemHandle(" + label + ", " + sizeBytes + " bytes, on "
                    + context.device() + ")", "the exporting process must still run, be on this host, and own a GPU"
                    + " this one can reach by peer access; CUDA IPC does not work between containers that do not share"
                    + " an IPC namespace, nor within one process");
        }
        return new IpcMemory(context, DevicePointer.wrap(raw), sizeBytes, label);
    }

    /**
     * The 64 bytes inside a JCuda handle. JCuda keeps them in a private field that its native code reads and writes
     * by name, with no accessor; this is the one place that reaches into it.
     */
    static byte[] handleBytes(CUipcMemHandle handle) {
        try {
            Field f = CUipcMemHandle.class.getDeclaredField("reserved");
            f.setAccessible(true);
            byte[] bytes = (byte[]) f.get(handle);
            if (bytes == null || bytes.length != HANDLE_BYTES) {
                throw new IllegalStateException("this JCuda's CUipcMemHandle holds "
                        + (bytes == null ? "no array" : bytes.length + " bytes") + ", not " + HANDLE_BYTES);
            }
            return bytes;
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("cannot read CUDA IPC handles through this JCuda version ("
                    + e + "): gda4j needs JCuda 12.x, whose CUipcMemHandle keeps the handle in 'reserved'", e);
        }
    }

    /** The mapped address, valid in this process's context. */
    public DevicePointer pointer() {
        return pointer;
    }

    public long address() {
        return pointer.address();
    }

    public long sizeBytes() {
        return sizeBytes;
    }

    /** Unmaps the peer's memory; kernels of this process must no longer use it. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        context.makeCurrent();
        int result = JCudaDriver.cuIpcCloseMemHandle(DevicePointer.of(address()));
        if (result != CUresult.CUDA_ERROR_DEINITIALIZED) {
            Cuda.check(result, "cuIpcCloseMemHandle(" + this + ")");
        }
    }

    @Override
    public String toString() {
        return "IpcMemory[" + label + ", " + sizeBytes + " bytes mapped at 0x" + Long.toHexString(address()) + " on "
                + context.device() + (closed.get() ? ", closed" : "") + "]";
    }
}
