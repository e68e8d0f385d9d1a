package io.gda4j.hostflag;

import io.gda4j.cuda.CudaContext;
import io.gda4j.cuda.CudaStream;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.cuda.DevicePointer;
import io.gda4j.gdrcopy.HostWritableGpuWord;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The {@code "stream-write"} {@link HostWritableGpuWord}: 8 bytes of device memory that the host sets with
 * {@code cuStreamWriteValue64} on a non-blocking stream of the word's own, so a store never queues behind kernels or
 * copies on other streams. Works on every GPU and needs nothing beyond the CUDA driver.
 *
 * <p>When a value lands: {@link #putLongRelease} enqueues the write (a driver call, microseconds of CPU) and returns;
 * the GPU performs it when it reaches the write on the stream, normally a few microseconds later and concurrently
 * with kernels on other streams. Puts land in the order they were made. {@link #flush()} returns once every put so
 * far has landed; {@link #getLongAcquire()} flushes first, so a thread reads its own writes.
 *
 * <p>Ordering: the driver submits the write after this thread's earlier stores (its doorbell is ordered behind
 * them), and the write carries the default flags, so the GPU fences before performing it; a kernel whose
 * {@code ld.acquire.sys} sees the value sees those stores too.
 */
public final class StreamWriteWord implements HostWritableGpuWord {

    /** {@link #backendName()} of this backend. */
    public static final String BACKEND_NAME = "stream-write";

    /** Bytes allocated for an owned word: a whole 128-byte line, so no neighbour shares the line the GPU polls. */
    static final long ALLOCATION_BYTES = 128;

    private final CudaContext context;
    private final CudaStream stream;
    private final DevicePointer address;
    private final DeviceMemory ownedMemory;
    private final boolean ownsStream;
    private final AtomicBoolean closed = new AtomicBoolean();

    private StreamWriteWord(CudaContext context, CudaStream stream, DevicePointer address, DeviceMemory ownedMemory,
            boolean ownsStream) {
        this.context = context;
        this.stream = stream;
        this.address = address;
        this.ownedMemory = ownedMemory;
        this.ownsStream = ownsStream;
    }

    /**
     * A new zeroed word in device memory of {@code context}, with a stream of its own; closing the word frees both.
     */
    public static StreamWriteWord allocate(CudaContext context) {
        DeviceMemory memory = context.allocate(ALLOCATION_BYTES);
        CudaStream stream = null;
        try {
            memory.fill((byte) 0);
            stream = context.createStream();
            return new StreamWriteWord(context, stream, memory.pointer(), memory, true);
        } catch (RuntimeException e) {
            closeAfterFailure(e, stream);
            closeAfterFailure(e, memory);
            throw e;
        }
    }

    /**
     * The existing 8-byte word at {@code address} (device memory the stream's GPU can write), written on
     * {@code stream}. The word owns neither: closing it leaves both alone, and both must outlive it.
     *
     * @throws IllegalArgumentException when the address is not 8-byte aligned
     */
    public static StreamWriteWord at(CudaStream stream, DevicePointer address) {
        Objects.requireNonNull(stream, "stream");
        if ((address.address() & (Long.BYTES - 1)) != 0 || address.address() == 0) {
            throw new IllegalArgumentException(String.format(
                    "a stream-written word needs a non-null 8-byte-aligned device address, got 0x%x",
                    address.address()));
        }
        return new StreamWriteWord(stream.context(), stream, address, null, false);
    }

    @Override
    public String backendName() {
        return BACKEND_NAME;
    }

    @Override
    public long deviceAddress() {
        return address.address();
    }

    /** The stream the writes go through. */
    public CudaStream stream() {
        return stream;
    }

    /**
     * Enqueues the store ({@code cuStreamWriteValue64}) and returns before it lands; see the class comment for when
     * it does. Pairs with the kernel's {@code ld.acquire.sys}.
     */
    @Override
    public void putLongRelease(long value) {
        requireOpen();
        stream.writeValue64(address, value);
    }

    /** Waits until every {@link #putLongRelease} made so far has landed in device memory. */
    public void flush() {
        requireOpen();
        stream.synchronize();
    }

    /**
     * {@link #flush()}, then a synchronous 8-byte copy to the host: tens of microseconds, for set-up and checks.
     * Pairs with a kernel's {@code st.release.sys} (the copy starts after the call and reads what has landed).
     */
    @Override
    public long getLongAcquire() {
        flush();
        return context.readLong(address);
    }

    /**
     * Waits for pending puts (best effort), then destroys the stream and frees the memory when the word owns them.
     * Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        RuntimeException failure = null;
        if (ownsStream) {
            try {
                if (!stream.isClosed()) {
                    stream.synchronize();
                }
            } catch (RuntimeException e) {
                failure = e;
            }
            failure = closeCollecting(stream, failure);
        }
        if (ownedMemory != null) {
            failure = closeCollecting(ownedMemory, failure);
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public String toString() {
        return String.format("StreamWriteWord[0x%x on %s%s]", address.address(), context.device(),
                closed.get() ? ", closed" : "");
    }

    private void requireOpen() {
        if (closed.get()) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    private static RuntimeException closeCollecting(AutoCloseable resource, RuntimeException failure) {
        try {
            resource.close();
        } catch (Exception e) {
            RuntimeException r = e instanceof RuntimeException ? (RuntimeException) e : new IllegalStateException(e);
            if (failure == null) {
                return r;
            }
            failure.addSuppressed(r);
        }
        return failure;
    }

    private static void closeAfterFailure(RuntimeException failure, AutoCloseable resource) {
        if (resource == null) {
            return;
        }
        try {
            resource.close();
        } catch (Exception e) {
            failure.addSuppressed(e);
        }
    }
}
