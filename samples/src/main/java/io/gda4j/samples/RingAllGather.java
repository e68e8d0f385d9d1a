package io.gda4j.samples;

import io.gda4j.cuda.DeviceMemory;
import io.gda4j.cuda.Kernel;
import io.gda4j.cuda.KernelArgs;
import io.gda4j.cuda.ModuleImage;
import io.gda4j.world.HeapBuffer;
import io.gda4j.world.Rank;
import io.gda4j.world.World;

import java.util.ArrayList;
import java.util.List;

/**
 * A collective written the way a gda4j user writes one: the kernel is the user's own ({@code samples/kernels/
 * ring_allgather.cu}, built with the nvcc command in README.md and shipped as the class-path resource
 * {@value #RESOURCE}), loaded with {@link ModuleImage} and launched on every rank with its device view. Copy this
 * class and the {@code .cu} file to start your own.
 *
 * <p>Every rank contributes {@code chunkBytes} at chunk index = its rank; after {@link #run()} every rank's
 * {@link #buffer()} holds all chunks in rank order.
 */
public final class RingAllGather implements AutoCloseable {
    /** Where the sample's PTX lives on the class path. */
    public static final String RESOURCE = "io/gda4j/samples/ring_allgather.ptx";
    static final String KERNEL = "ring_allgather";
    /** One block of this many threads per rank: put_signal_block spreads each chunk's copy over them. */
    static final int BLOCK_THREADS = 256;

    private final World world;
    private final long chunkBytes;
    private final HeapBuffer buffer;
    private final HeapBuffer signal;
    private final ModuleImage image;
    private final List<DeviceMemory> status = new ArrayList<>();
    private long round;

    /**
     * Allocates the all-gather buffer ({@code world.size() * chunkBytes}) and its signal word in the symmetric heap,
     * and reads the module image; nothing is loaded on a GPU yet.
     */
    public RingAllGather(World world, long chunkBytes) {
        if (chunkBytes <= 0) {
            throw new IllegalArgumentException("chunk size must be at least 1 byte, got " + chunkBytes);
        }
        this.world = world;
        this.chunkBytes = chunkBytes;
        this.buffer = world.heap().allocate(Math.multiplyExact(chunkBytes, world.size()));
        this.signal = world.heap().allocateSignals(1);
        this.image = ModuleImage.classPathResource(RESOURCE, RingAllGather.class.getClassLoader());
        for (Rank r : world.localRanks()) {
            status.add(r.context().allocate(Integer.BYTES));
        }
    }

    /** The all-gather buffer: chunk {@code r} of rank {@code r} at {@code offset() + r * chunkBytes}. */
    public HeapBuffer buffer() {
        return buffer;
    }

    public long chunkBytes() {
        return chunkBytes;
    }

    /**
     * One all-gather: each rank resolves its kernel and launches it (a user's natural order: resolve, launch, next
     * rank), then all streams are synchronized and device errors checked.
     */
    public void run() {
        round++;
        List<Rank> ranks = world.localRanks();
        for (int i = 0; i < ranks.size(); i++) {
            Rank r = ranks.get(i);
            Kernel kernel = r.kernel(image, KERNEL);
            kernel.launch(1, BLOCK_THREADS, 0, r.stream(), KernelArgs.create().pointer(r.deviceView())
                    .i64(buffer.offset()).i64(chunkBytes).i64(signal.word(0)).i64(round)
                    .pointer(status.get(i).pointer()));
        }
        for (Rank r : ranks) {
            r.synchronize();
        }
        world.checkErrors();
        for (int i = 0; i < ranks.size(); i++) {
            byte[] st = new byte[Integer.BYTES];
            status.get(i).copyToHost(0, st, 0, st.length);
            int code = (st[0] & 0xff) | (st[1] & 0xff) << 8 | (st[2] & 0xff) << 16 | st[3] << 24;
            if (code != 0) {
                throw new IllegalStateException("ring all-gather on rank " + ranks.get(i).rank()
                        + " ended with device status " + code);
            }
        }
    }

    @Override
    public void close() {
        for (DeviceMemory m : status) {
            m.close();
        }
    }
}
