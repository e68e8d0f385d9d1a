package io.gda4j.samples;

import io.gda4j.cuda.CudaEvent;
import io.gda4j.cuda.CudaStream;
import io.gda4j.cuda.Kernel;
import io.gda4j.cuda.KernelArgs;
import io.gda4j.world.HeapBuffer;
import io.gda4j.world.Rank;
import io.gda4j.world.World;

import java.util.Arrays;

/**
 * One-directional bandwidth from rank to peer: the device API's {@code put_block} run by a grid of blocks (kernel
 * {@code gda4j_put_bandwidth}), and {@code cuMemcpyPeerAsync} between the same two heap buffers as the reference.
 * Each measurement is timed with CUDA events around {@code iterations} back-to-back copies; the reported figure is
 * the median of {@code repetitions} measurements.
 *
 * <p>In a multi-process world only the process of the sending rank measures; the peer's heap is then mapped by CUDA
 * IPC, and the copy-engine reference is {@code cuMemcpyDtoDAsync} into that mapping (the same copy engine path,
 * without the peer's context, which lives in another process). Construct it in the sender's process only.
 */
final class PutBandwidth implements AutoCloseable {
    private final World world;
    private final Rank rank;
    private final int peerNumber;
    private final HeapBuffer src;
    private final HeapBuffer dst;
    private final CudaEvent start;
    private final CudaEvent stop;
    private final Kernel kernel;

    PutBandwidth(World world, int rank, int peer, long maxBytes) {
        this.world = world;
        this.rank = world.rank(rank);
        this.peerNumber = peer;
        this.src = world.heap().allocate(maxBytes);
        this.dst = world.heap().allocate(maxBytes);
        this.start = this.rank.context().createEvent();
        this.stop = this.rank.context().createEvent();
        this.kernel = this.rank.kernel(PingPong.module(world, rank, peer), "gda4j_put_bandwidth");
    }

    static long heapBytes(long maxBytes) {
        return 2 * (maxBytes + 256) + 4096;
    }

    /** Copies per measurement so that one measurement moves about 1 GiB (at least 1, at most 10000). */
    static int iterationsFor(long bytes) {
        return (int) Math.max(1, Math.min(10_000, (1L << 30) / bytes));
    }

    /**
     * Chunk that spreads {@code bytes} over all {@code blocks}: size / blocks rounded up to 1 KiB, at most 64 KiB
     * (larger chunks leave blocks idle on small sizes; smaller ones cost more loop overhead on large sizes).
     */
    static long chunkFor(long bytes, int blocks) {
        long perBlock = (bytes + blocks - 1) / blocks;
        long rounded = (perBlock + 1023) & -1024L;
        return Math.max(1024, Math.min(64 * 1024, rounded));
    }

    /**
     * The chunk a block moves per put: over proxy or IBGDA the whole size, so each copy is one trigger (one
     * copy-engine transfer, which wants large copies) or one WQE (the NIC moves it); otherwise {@link #chunkFor}.
     */
    static long defaultChunk(boolean indirect, long bytes, int blocks) {
        return indirect ? bytes : chunkFor(bytes, blocks);
    }

    /** Put bandwidth in GB/s (10^9 bytes per second); blocks take {@code chunkBytes} chunks round-robin. */
    double put(long bytes, int blocks, int threads, long chunkBytes, int iterations, int repetitions) {
        CudaStream s = rank.stream();
        rank.scratch().writeLong(0, 0);
        KernelArgs args = KernelArgs.create().pointer(rank.deviceView()).i32(peerNumber).i64(dst.offset())
                .i64(src.offset()).i64(bytes).i64(chunkBytes).u32(iterations).pointer(rank.scratch().pointer());
        kernel.launch(blocks, threads, 0, s, args); // warm-up
        double[] gbps = new double[repetitions];
        for (int rep = 0; rep < repetitions; rep++) {
            start.record(s);
            kernel.launch(blocks, threads, 0, s, args);
            stop.record(s);
            stop.synchronize();
            gbps[rep] = rate(bytes, iterations, stop.elapsedMillisSince(start));
        }
        s.synchronize();
        world.checkErrors();
        int st = (int) rank.scratch().readLong(0);
        if (st != 0) {
            throw new IllegalStateException("put bandwidth kernel ended with device status " + st);
        }
        return median(gbps);
    }

    /**
     * Copy-engine bandwidth in GB/s between the same buffers: cuMemcpyPeerAsync, or cuMemcpyDtoDAsync into the
     * IPC-mapped heap when the peer lives in another process ({@link CopyEngineBandwidth}).
     */
    double copyEngine(long bytes, int iterations, int repetitions) {
        return CopyEngineBandwidth.gbps(world, rank, peerNumber, src.offset(), dst.offset(), bytes, iterations,
                repetitions, start, stop);
    }

    static double rate(long bytes, int iterations, float millis) {
        return (double) bytes * iterations / (millis * 1e6);
    }

    static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    @Override
    public void close() {
        stop.close();
        start.close();
    }
}
