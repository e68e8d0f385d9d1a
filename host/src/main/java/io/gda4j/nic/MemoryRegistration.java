package io.gda4j.nic;

import io.gda4j.cuda.CudaContext;

import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * A request to register memory with a {@link Nic}.
 *
 * @param owner        the CUDA context the memory belongs to (for {@link MemoryKind#DEVICE}, the GPU it is on)
 * @param address      first byte; for device memory the device pointer, for host memory the host pointer
 * @param lengthBytes  bytes to register, at least 1
 * @param kind         where the memory lives
 * @param access       what the NIC and peers may do with it
 * @param label        for messages, e.g. {@code "rank 1 heap"}
 */
public record MemoryRegistration(CudaContext owner, long address, long lengthBytes, MemoryKind kind,
                                 Set<NicAccess> access, String label) {
    public MemoryRegistration {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(label, "label");
        if (address == 0 || lengthBytes < 1 || address + lengthBytes < address) {
            throw new IllegalArgumentException(String.format("%s: cannot register [0x%x, +%d)", label, address,
                    lengthBytes));
        }
        access = access.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(access));
    }

    /** A rank's symmetric heap in GPU memory, with every access a peer needs. */
    public static MemoryRegistration deviceHeap(CudaContext owner, long address, long lengthBytes, String label) {
        return new MemoryRegistration(owner, address, lengthBytes, MemoryKind.DEVICE, NicAccess.HEAP, label);
    }
}
