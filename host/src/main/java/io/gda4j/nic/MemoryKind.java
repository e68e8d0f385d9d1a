package io.gda4j.nic;

/** Where registered memory lives, which decides how a NIC reaches it. */
public enum MemoryKind {
    /**
     * GPU memory of {@link MemoryRegistration#owner()} ({@code cuMemAlloc}); the address is the device pointer.
     * mlx5 registers it as a dma-buf (or through nvidia-peermem); the emulated NIC copies to and from it with CUDA.
     */
    DEVICE,
    /**
     * Pinned host memory mapped into the GPU ({@code cuMemHostAlloc(DEVICEMAP)}); the address is the host pointer,
     * which under unified addressing is also the device pointer.
     */
    HOST_MAPPED
}
