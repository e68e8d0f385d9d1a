package io.gda4j.hostflag;

import io.gda4j.cuda.CudaContext;
import io.gda4j.cuda.MappedHostMemory;
import io.gda4j.gdrcopy.HostWritableGpuWord;

/**
 * The {@code "mapped-pinned"} {@link HostWritableGpuWord}: the word lives in pinned host memory mapped into the GPU
 * ({@link MappedHostMemory}); the host stores to it with an ordinary release store, and the kernel reads it across
 * PCIe (or C2C) at {@link #deviceAddress()}, the mapping's device pointer. No driver call and no allocation per
 * store, so it suits a polling thread's hot path; every poll of the kernel is a read of host memory, about a
 * microsecond each over PCIe.
 *
 * <p>{@link #putLongRelease} is a {@code setRelease} through the VarHandle accessor: ordered after this thread's
 * earlier stores, and on its way at once (the store buffer drains by itself; no later operation is needed to push it
 * out). It pairs with the kernel's {@code ld.acquire.sys} (or a volatile load) of {@link #deviceAddress()}.
 * {@link #getLongAcquire()} is an acquire load of host memory, pairing with a kernel's {@code st.release.sys}.
 *
 * <p>Such a word is always a fresh allocation: it cannot stand for a word that already lives in device memory.
 */
public final class MappedPinnedWord implements HostWritableGpuWord {

    /** {@link #backendName()} of this backend. */
    public static final String BACKEND_NAME = "mapped-pinned";

    /**
     * Bytes allocated: a whole 128-byte line (the GPU's L2 line, two x86 lines), so no neighbour the CPU writes
     * shares the line the GPU polls.
     */
    static final long ALLOCATION_BYTES = 128;

    private static final int WORD_OFFSET = 0;

    private final MappedHostMemory memory;

    private MappedPinnedWord(MappedHostMemory memory) {
        this.memory = memory;
    }

    /** A new zeroed word; closing it frees the pinned memory. */
    public static MappedPinnedWord allocate(CudaContext context) {
        return new MappedPinnedWord(context.allocateMappedHost(ALLOCATION_BYTES));
    }

    @Override
    public String backendName() {
        return BACKEND_NAME;
    }

    /** The mapping's device pointer: host memory as the GPU addresses it. */
    @Override
    public long deviceAddress() {
        return memory.deviceAddress() + WORD_OFFSET;
    }

    /** The word's host virtual address. */
    public long hostAddress() {
        return memory.hostAddress() + WORD_OFFSET;
    }

    /** A release store; pairs with the kernel's {@code ld.acquire.sys}. About as cheap as a plain store. */
    @Override
    public void putLongRelease(long value) {
        memory.putLongRelease(WORD_OFFSET, value);
    }

    /** An acquire load of host memory; pairs with a kernel's {@code st.release.sys}. */
    @Override
    public long getLongAcquire() {
        return memory.getLongAcquire(WORD_OFFSET);
    }

    /** Frees the pinned memory; idempotent. Kernels must be done with the word. */
    @Override
    public void close() {
        memory.close();
    }

    @Override
    public String toString() {
        return String.format("MappedPinnedWord[host 0x%x, device 0x%x%s]", memory.hostAddress(),
                memory.deviceAddress(), memory.isClosed() ? ", closed" : "");
    }
}
