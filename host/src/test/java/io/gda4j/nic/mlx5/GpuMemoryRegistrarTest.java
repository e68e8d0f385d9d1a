package io.gda4j.nic.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.nic.MemoryKind;
import io.gda4j.nic.MemoryRegistration;
import io.gda4j.nic.NicAccess;
import io.gda4j.nic.NicException;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;

/** What a user reads when GPU memory cannot be registered, and how the peer-memory module is detected. */
class GpuMemoryRegistrarTest {
    static final MemoryRegistration HEAP = new MemoryRegistration(null, 0x7f2200000000L, 1 << 30, MemoryKind.DEVICE,
            NicAccess.HEAP, "rank 1 heap");

    @Test
    void namesBothAttemptsAndWhatEachNeeds() {
        String message = GpuMemoryRegistrar.bothFailed(HEAP,
                "cuMemGetHandleForAddressRange(0x7f2200000000, 1073741824 bytes, DMA_BUF_FD) on GPU 0 failed:"
                        + " CUDA_ERROR_NOT_SUPPORTED (801)",
                "ibv_reg_mr(PD 0x55 on mlx5_0, addr 0x7f2200000000, 1073741824 bytes, access 0xf) failed: EFAULT (14,"
                        + " Bad address). The address range is not mapped in this process.", false);
        assertEquals("cannot register rank 1 heap (GPU memory [0x7f2200000000, +1073741824)) with the NIC."
                + " 1) dma-buf: cuMemGetHandleForAddressRange(0x7f2200000000, 1073741824 bytes, DMA_BUF_FD) on GPU 0"
                + " failed: CUDA_ERROR_NOT_SUPPORTED (801). 2) nvidia-peermem: ibv_reg_mr(PD 0x55 on mlx5_0, addr"
                + " 0x7f2200000000, 1073741824 bytes, access 0xf) failed: EFAULT (14, Bad address). The address range"
                + " is not mapped in this process. (nvidia-peermem is not loaded: none of"
                + " [/sys/kernel/mm/memory_peers/nv_mem/version, /sys/kernel/mm/memory_peers/nvidia-peermem/version,"
                + " /sys/module/nvidia_peermem/version] exists.) GPUDirect RDMA needs one of: dma-buf (Linux 5.12+,"
                + " rdma-core 34+, a driver whose GPU reports CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, usually the open"
                + " kernel modules) or the nvidia-peermem module (modprobe nvidia-peermem).", message);
        assertTrue(GpuMemoryRegistrar.bothFailed(HEAP, "skipped because gda4j.mlx5.dmabuf=off", "x", true)
                .contains("1) dma-buf: skipped because gda4j.mlx5.dmabuf=off. 2) nvidia-peermem: x. (nvidia-peermem"
                        + " is loaded.)"));
    }

    @Test
    void detectsThePeerMemoryClientByItsSysfsFiles() {
        assertFalse(GpuMemoryRegistrar.peerMemoryLoaded(p -> false));
        assertTrue(GpuMemoryRegistrar.peerMemoryLoaded(
                p -> p.equals(Path.of("/sys/module/nvidia_peermem/version"))));
    }

    @Test
    void gpuMemoryNeedsItsContext() {
        NicException e = assertThrows(NicException.class,
                () -> GpuMemoryRegistrar.register(null, HEAP, 0xf, true, 4096));
        assertEquals("rank 1 heap: GPU memory needs its CUDA context (MemoryRegistration.owner)", e.getMessage());
    }
}
