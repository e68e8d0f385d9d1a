package io.gda4j.gdrcopy;

/**
 * An 8-byte word of GPU memory the host can write with low latency: a flag, a signal, a FIFO tail a kernel polls.
 *
 * <p>Backends: {@code "gdrcopy"} ({@link GdrWord}: a CPU store into BAR1-mapped device memory, sub-microsecond),
 * and the fallbacks for machines without gdrcopy in {@code io.gda4j.hostflag} (module host): {@code "stream-write"}
 * ({@code cuStreamWriteValue64}) and {@code "mapped-pinned"} (a word in pinned host memory mapped into the GPU).
 * Callers get one from {@code io.gda4j.hostflag.HostFlags.allocate(context, backend)}, which picks by
 * {@link Gdrcopy#status()}, and then use only this interface.
 *
 * <p>Ordering contract, the same for every backend: {@link #putLongRelease} by the host pairs with an
 * {@code ld.acquire.sys} of {@link #deviceAddress()} by the kernel; a kernel that sees the value also sees every
 * host store the storing thread made before it.
 */
public interface HostWritableGpuWord extends AutoCloseable {

    /** Which backend this is, e.g. {@code "gdrcopy"}, {@code "stream-write"}, {@code "mapped-pinned"}. */
    String backendName();

    /** The address a kernel loads (with {@code ld.acquire.sys}) to see the word; 8-byte aligned. */
    long deviceAddress();

    /**
     * Stores {@code value}, ordered after this thread's earlier host stores, and sends it on its way without
     * waiting for a later operation to push it out. Pairs with the kernel's {@code ld.acquire.sys}.
     */
    void putLongRelease(long value);

    /**
     * Reads the word back, ordered before this thread's later loads and stores; pairs with a kernel's
     * {@code st.release.sys}.
     *
     * @throws UnsupportedOperationException where the backend cannot read device memory from the host
     */
    long getLongAcquire();

    /** Releases what the word holds (mapping, pin, stream); idempotent. Using the word afterwards throws. */
    @Override
    void close();
}
