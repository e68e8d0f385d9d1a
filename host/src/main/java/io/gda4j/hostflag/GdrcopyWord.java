package io.gda4j.hostflag;

import io.gda4j.cuda.CudaContext;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.gdrcopy.GdrWord;
import io.gda4j.gdrcopy.GpuPageRange;
import io.gda4j.gdrcopy.GpuPages;
import io.gda4j.gdrcopy.HostWritableGpuWord;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The {@code "gdrcopy"} {@link HostWritableGpuWord} together with the device memory it lives in: a {@link GdrWord}
 * (a CPU store into GPU memory mapped through BAR1, no CUDA or JNA call per store) over a {@code cuMemAlloc}
 * allocation of its own that is laid out the way gdrdrv needs it.
 *
 * <p>Layout: gdr_pin_buffer pins whole 64 KiB GPU pages and they must all lie inside one allocation, while
 * {@code cuMemAlloc} promises no such alignment; so {@link GpuPages#overAllocationBytes(long)} bytes are allocated
 * and the word sits at the first 64 KiB boundary inside them. {@code CU_POINTER_ATTRIBUTE_SYNC_MEMOPS} is set on the
 * allocation before pinning (as gdrcopy's own tests do), so a synchronous CUDA copy to it cannot land after a later
 * CPU store through the mapping.
 *
 * <p>Ordering and cost are {@link GdrWord}'s: {@link #putLongRelease} fences, stores, and drains the
 * write-combining buffer; {@link #getLongAcquire} is an uncached PCIe read, about a microsecond.
 */
public final class GdrcopyWord implements HostWritableGpuWord {

    private final DeviceMemory memory;
    private final GdrWord word;
    private final AtomicBoolean closed = new AtomicBoolean();

    private GdrcopyWord(DeviceMemory memory, GdrWord word) {
        this.memory = memory;
        this.word = word;
    }

    /**
     * Allocates, zeroes, pins and maps a new word in {@code context}'s GPU memory.
     *
     * @throws io.gda4j.gdrcopy.GdrcopyException when gdrcopy is unavailable or pinning or mapping fails (the message
     *                                          says why and what to do)
     */
    public static GdrcopyWord allocate(CudaContext context) {
        DeviceMemory memory = context.allocate(GpuPages.overAllocationBytes(Long.BYTES));
        try {
            memory.enableSyncMemops();
            memory.fill((byte) 0);
            GpuPageRange page = GpuPages.alignedInside(memory.address(), memory.sizeBytes(), Long.BYTES);
            return new GdrcopyWord(memory, GdrWord.map(page.address()));
        } catch (RuntimeException e) {
            try {
                memory.close();
            } catch (RuntimeException closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
    }

    @Override
    public String backendName() {
        return GdrWord.BACKEND_NAME;
    }

    /** The word's GPU address: 64 KiB-aligned, inside the allocation. */
    @Override
    public long deviceAddress() {
        return word.deviceAddress();
    }

    /** The gdrcopy word underneath (its mapping, for payload stores next to the flag). */
    public GdrWord gdrWord() {
        return word;
    }

    /** See {@link GdrWord#putLongRelease(long)}. */
    @Override
    public void putLongRelease(long value) {
        word.putLongRelease(value);
    }

    /** See {@link GdrWord#getLongAcquire()}. */
    @Override
    public long getLongAcquire() {
        return word.getLongAcquire();
    }

    /** Unmaps, unpins and closes the gdrcopy handle, then frees the device memory. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        RuntimeException failure = null;
        try {
            word.close();
        } catch (RuntimeException e) {
            failure = e;
        }
        try {
            memory.close();
        } catch (RuntimeException e) {
            if (failure == null) {
                failure = e;
            } else {
                failure.addSuppressed(e);
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public String toString() {
        return "GdrcopyWord[" + word + " in " + memory + (closed.get() ? ", closed" : "") + "]";
    }
}
