package io.gda4j.nic.mlx5;

import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.CudaContext;
import io.gda4j.cuda.CudaException;
import io.gda4j.cuda.CudaUnavailableException;
import io.gda4j.cuda.DevicePointer;
import io.gda4j.cuda.DmaBuf;
import io.gda4j.cuda.Driver;
import io.gda4j.nic.MemoryRegistration;
import io.gda4j.nic.NicException;
import io.gda4j.verbs.LibIbverbs;
import io.gda4j.verbs.MemoryRegion;
import io.gda4j.verbs.ProtectionDomain;
import io.gda4j.verbs.VerbsException;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Predicate;

/**
 * Registers GPU memory with the NIC, the way NVSHMEM's {@code nvshmemt_ib_common_reg_mem_handle} and NCCL do:
 * <ol>
 *   <li>dma-buf: round the range out to host pages, {@code cuMemGetHandleForAddressRange(DMA_BUF_FD)} (dptr and
 *       size must be page aligned, cuda.h), {@code ibv_reg_dmabuf_mr(pd, 0, size, iova = aligned dptr, fd, access)},
 *       then close the fd (the MR holds its own reference to the dma-buf);</li>
 *   <li>otherwise nvidia-peermem: {@code cuPointerSetAttribute(SYNC_MEMOPS)} on the range (so synchronous CUDA
 *       copies into it complete before later RDMA reads it, as NCCL and NVSHMEM set it) and a plain
 *       {@code ibv_reg_mr} on the device pointer, which the kernel resolves through the peer-memory client.</li>
 * </ol>
 * When both fail the exception names both attempts and what each needs.
 */
final class GpuMemoryRegistrar {
    /** Where the peer-memory client announces itself (NVSHMEM's {@code nv_peer_mem_available} checks these). */
    static final List<Path> PEERMEM_MARKERS = List.of(Path.of("/sys/kernel/mm/memory_peers/nv_mem/version"),
            Path.of("/sys/kernel/mm/memory_peers/nvidia-peermem/version"),
            Path.of("/sys/module/nvidia_peermem/version"));

    private GpuMemoryRegistrar() {
    }

    /**
     * Registers {@code request} (GPU memory of {@code request.owner()}) with {@code pd}.
     *
     * @param access   {@code IBV_ACCESS_*} flags
     * @param dmabuf   whether to try the dma-buf path first
     * @param pageSize the host page size
     */
    static MemoryRegion register(ProtectionDomain pd, MemoryRegistration request, int access, boolean dmabuf,
                                 int pageSize) {
        CudaContext owner = request.owner();
        if (owner == null) {
            throw new NicException(request.label() + ": GPU memory needs its CUDA context (MemoryRegistration.owner)");
        }
        String dmabufFailure;
        if (!dmabuf) {
            dmabufFailure = "skipped because " + Mlx5Settings.DMABUF_PROP_NAME + "=off";
        } else {
            try {
                return registerDmabuf(pd, request, access, pageSize);
            } catch (NicException | VerbsException | CudaException | CudaUnavailableException e) {
                dmabufFailure = e.getMessage();
            }
        }
        String peermemFailure;
        try {
            return registerPeerMemory(pd, request, access);
        } catch (VerbsException | CudaException | CudaUnavailableException e) {
            peermemFailure = e.getMessage();
        }
        throw new NicException(bothFailed(request, dmabufFailure, peermemFailure,
                peerMemoryLoaded(Files::exists)));
    }

    /** The message when neither path registered the memory. */
    static String bothFailed(MemoryRegistration request, String dmabufFailure, String peermemFailure,
                             boolean peermemLoaded) {
        return String.format("cannot register %s (GPU memory [0x%x, +%d)) with the NIC. 1) dma-buf: %s 2)"
                        + " nvidia-peermem: %s%s GPUDirect RDMA needs one of: dma-buf (Linux 5.12+, rdma-core 34+,"
                        + " a driver whose GPU reports CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, usually the open"
                        + " kernel modules) or the nvidia-peermem module (modprobe nvidia-peermem).",
                request.label(), request.address(), request.lengthBytes(), sentence(dmabufFailure),
                sentence(peermemFailure), peermemLoaded ? " (nvidia-peermem is loaded.)"
                        : " (nvidia-peermem is not loaded: none of " + PEERMEM_MARKERS + " exists.)");
    }

    /** Whether a peer-memory client for NVIDIA GPUs is loaded, asking {@code exists} about the marker files. */
    static boolean peerMemoryLoaded(Predicate<Path> exists) {
        for (Path marker : PEERMEM_MARKERS) {
            if (exists.test(marker)) {
                return true;
            }
        }
        return false;
    }

    private static MemoryRegion registerDmabuf(ProtectionDomain pd, MemoryRegistration request, int access,
                                               int pageSize) {
        if (!LibIbverbs.RegDmabufMr.isAvailable()) {
            throw new NicException("ibv_reg_dmabuf_mr is not available: "
                    + LibIbverbs.RegDmabufMr.unavailableReason());
        }
        if (DmaBuf.unavailableReason() != null) {
            throw new NicException("cuMemGetHandleForAddressRange is not available: " + DmaBuf.unavailableReason());
        }
        CudaContext owner = request.owner();
        Cuda.requireAvailable();
        if (!owner.device().dmaBufSupported()) {
            throw new NicException(owner.device() + " reports CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 0");
        }
        PageRange pages = PageRange.around(request.address(), request.lengthBytes(), pageSize);
        int fd = DmaBuf.export(owner, pages.start(), pages.lengthBytes());
        try {
            // offset 0 and iova = the aligned start: the MR covers the whole pages, WQEs use device addresses.
            return pd.registerDmabuf(fd, 0L, pages.lengthBytes(), pages.start(), access);
        } finally {
            LibC.closeFd(fd);
        }
    }

    private static MemoryRegion registerPeerMemory(ProtectionDomain pd, MemoryRegistration request, int access) {
        CudaContext owner = request.owner();
        Cuda.requireAvailable();
        owner.makeCurrent();
        int result = Driver.setSyncMemops(DevicePointer.of(request.address()));
        if (result != Driver.SUCCESS) {
            throw new CudaException(result, String.format("cuPointerSetAttribute(SYNC_MEMOPS, 0x%x) on %s",
                    request.address(), owner.device()), "the address must be device memory from cuMemAlloc");
        }
        return pd.registerHostMemory(request.address(), request.lengthBytes(), access);
    }

    private static String sentence(String text) {
        String t = text == null ? "failed" : text.strip();
        return t.endsWith(".") ? t : t + ".";
    }
}
