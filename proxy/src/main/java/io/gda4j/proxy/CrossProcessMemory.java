package io.gda4j.proxy;

import java.nio.ByteBuffer;

/**
 * Memory one process of this host lends to the NICs of the others, and how it maps what they lend: the verbs
 * handler's credit blocks (host memory this process's proxy reads and the peers' NICs write) and the atomic lock line
 * of its heap (which every process's emulated NIC takes before an atomic on that heap). The exporter publishes
 * {@link Exported#handle()} in its offer ({@link VerbsOffer}); a peer {@link #open}s it.
 *
 * <p>Implementations: {@link MemfdMemory} (host memory in a memfd, which the CPU tests use for both), and
 * {@link CudaCrossProcessMemory} on a GPU machine (the same host memory registered with CUDA where a peer's emulated
 * NIC writes it from a CUDA stream; the lock line in GPU memory, shared by CUDA IPC).
 */
public interface CrossProcessMemory {
    /** Memory this process lends; closing it stops lending (peers that mapped it keep their mapping). */
    interface Exported extends AutoCloseable {
        /** Where this process's NIC registration names it. */
        long address();

        /** A host view of all of it, or null where the host cannot read it (GPU memory). */
        ByteBuffer buffer();

        /** What another process of this host passes to {@link #open} to map it. */
        byte[] handle();

        @Override
        void close();
    }

    /** Another process's memory as this process (and its NIC) addresses it; closing it unmaps it here. */
    interface Opened extends AutoCloseable {
        long address();

        @Override
        void close();
    }

    /**
     * Lends {@code bytes} of zeroed memory.
     *
     * @param label what it is, for messages and the handle's name ("rank 0 credit blocks")
     */
    Exported export(int bytes, String label);

    /**
     * Maps what another process exported.
     *
     * @param handle its {@link Exported#handle()}
     * @param bytes  how many bytes of it to map (at most what was exported)
     * @param label  what it is, for messages ("rank 1 (pid 7 on h)'s credit blocks")
     * @throws ProxyException naming {@code label} when the memory cannot be mapped (its process ended or closed it)
     */
    Opened open(byte[] handle, int bytes, String label);
}
