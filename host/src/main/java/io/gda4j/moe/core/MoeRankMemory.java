package io.gda4j.moe.core;

import io.gda4j.cuda.CudaEvent;
import io.gda4j.cuda.CudaStream;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.cuda.DevicePointer;
import io.gda4j.cuda.MappedHostMemory;
import io.gda4j.world.Rank;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.function.Consumer;
import java.util.function.LongFunction;

/**
 * What each MoE rank (high-throughput and low-latency alike) owns beside its kernels: its device memory (zeroed; the
 * high-throughput params block written at its offset, the low-latency kernels take theirs by value), and pinned
 * memory that host reads go through on the stream the rank's calls run on (the rank's stream unless a caller names
 * another), and the event recorded after each call.
 */
public final class MoeRankMemory implements AutoCloseable {
    private final Rank rank;
    private final DeviceMemory memory;
    private final MappedHostMemory readback;
    private final CudaEvent done;

    /**
     * @param params the params block for a memory at the given base address, written at {@code paramsOffset}
     */
    public MoeRankMemory(Rank rank, long deviceBytes, int readbackBytes, long paramsOffset,
                         LongFunction<ByteBuffer> params) {
        this(rank, deviceBytes, readbackBytes, m -> m.copyFromHost(paramsOffset, params.apply(m.address())));
    }

    /** Device memory with no params block in it. */
    public MoeRankMemory(Rank rank, long deviceBytes, int readbackBytes) {
        this(rank, deviceBytes, readbackBytes, m -> { });
    }

    private MoeRankMemory(Rank rank, long deviceBytes, int readbackBytes, Consumer<DeviceMemory> init) {
        this.rank = rank;
        DeviceMemory m = rank.context().allocate(deviceBytes);
        MappedHostMemory rb = null;
        CudaEvent ev = null;
        try {
            m.fill((byte) 0);
            rb = rank.context().allocateMappedHost(readbackBytes);
            // Without timing: it is recorded after every call, and with timing it put about 3 us more between a
            // call's kernel and the next one's (low-latency calls on 2 H200s, medians of 50).
            ev = rank.context().createOrderingEvent();
            init.accept(m);
        } catch (RuntimeException e) {
            if (ev != null) {
                ev.close();
            }
            if (rb != null) {
                rb.close();
            }
            m.close();
            throw e;
        }
        this.memory = m;
        this.readback = rb;
        this.done = ev;
    }

    /** The device address of the memory's first byte. */
    public long address() {
        return memory.address();
    }

    /** Recorded after each call queued on the rank; an ordering event (no timing). */
    public CudaEvent done() {
        return done;
    }

    /** The device address {@code offset} bytes into the memory. */
    public DevicePointer at(long offset) {
        return memory.pointer().plusBytes(offset);
    }

    /**
     * Copies {@code dst.length} bytes at {@code address} to {@code dst} through the pinned memory on the rank's stream:
     * it waits for this rank's queued work, and for nothing else.
     */
    public void copyToHost(DevicePointer address, byte[] dst) {
        copyToHost(rank.stream(), address, dst);
    }

    /** As {@link #copyToHost(DevicePointer, byte[])}, on {@code stream}: it waits for the work queued there. */
    public synchronized void copyToHost(CudaStream stream, DevicePointer address, byte[] dst) {
        int chunk = Math.toIntExact(readback.sizeBytes());
        for (int at = 0; at < dst.length; at += chunk) {
            int n = Math.min(chunk, dst.length - at);
            read(stream, address.plusBytes(at), n).get(dst, at, n);
        }
    }

    /** {@code bytes} (at most the pinned memory's size) at {@code src}, read as {@link #copyToHost} does. */
    public ByteBuffer read(DevicePointer src, int bytes) {
        return read(rank.stream(), src, bytes);
    }

    /** {@code bytes} (at most the pinned memory's size) at {@code src}, copied on {@code stream} after its work. */
    public synchronized ByteBuffer read(CudaStream stream, DevicePointer src, int bytes) {
        stream.copyAsync(readback.devicePointer(), src, bytes);
        stream.synchronize();
        ByteBuffer view = readback.hostBuffer().duplicate().order(ByteOrder.LITTLE_ENDIAN);
        view.limit(bytes);
        ByteBuffer copy = ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
        copy.put(view).flip();
        return copy;
    }

    @Override
    public void close() {
        done.close();
        readback.close();
        memory.close();
    }
}
