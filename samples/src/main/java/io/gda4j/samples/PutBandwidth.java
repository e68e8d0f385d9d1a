package io.gda4j.samples;

import io.gda4j.cuda.CudaEvent;
import io.gda4j.cuda.CudaStream;
import io.gda4j.cuda.DevicePointer;
import io.gda4j.cuda.Kernel;
import io.gda4j.cuda.KernelArgs;
import io.gda4j.world.HeapBuffer;
import io.gda4j.world.ProcessWorld;
import io.gda4j.world.Rank;
import io.gda4j.world.World;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;

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
    /** Measurements so far: the payload seeds' salt, so no measurement's payload is an earlier one's. */
    private long salt;

    PutBandwidth(World world, int rank, int peer, long maxBytes) {
        this(world, rank, peer, world.heap().allocate(maxBytes), world.heap().allocate(maxBytes));
    }

    private PutBandwidth(World world, int rank, int peer, HeapBuffer src, HeapBuffer dst) {
        this.world = world;
        this.rank = world.rank(rank);
        this.peerNumber = peer;
        this.src = src;
        this.dst = dst;
        this.start = this.rank.context().createEvent();
        this.stop = this.rank.context().createEvent();
        this.kernel = this.rank.kernel(PingPong.module(world, rank, peer), "gda4j_put_bandwidth");
    }

    /**
     * The same buffers the other way, peer to rank (the peer's source into this rank's destination), for the
     * bidirectional figure; both ranks must be in this process.
     */
    PutBandwidth reverse() {
        return new PutBandwidth(world, peerNumber, rank.rank(), src, dst);
    }

    /**
     * Why the payload check cannot run for this pair, or null where it can: the check copies what arrived back from
     * the peer's heap, which only a peer of this host has mapped here.
     */
    static String uncheckableReason(World world, int rank, int peer) {
        if (world instanceof ProcessWorld pw && !pw.cards().get(rank).sameHost(pw.cards().get(peer))) {
            return "rank " + peer + " runs on another host, whose heap is not mapped here to read back what arrived";
        }
        return null;
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

    /**
     * Put bandwidth in GB/s (10^9 bytes per second), the median of {@code repetitions}; blocks take
     * {@code chunkBytes} chunks round-robin. {@code check}: before each measurement the source gets a payload of its
     * own, after it what arrived is copied back from the peer and compared ({@link PayloadCheck}), all outside the
     * events; a difference fails with {@link PayloadCheck.MismatchException}.
     */
    double put(long bytes, int blocks, int threads, long chunkBytes, int iterations, int repetitions, boolean check) {
        return median(puts(bytes, blocks, threads, chunkBytes, iterations, repetitions, check));
    }

    /** Every measurement of {@link #put}, in GB/s, in the order they ran. */
    double[] puts(long bytes, int blocks, int threads, long chunkBytes, int iterations, int repetitions,
                  boolean check) {
        CudaStream s = rank.stream();
        rank.scratch().writeLong(0, 0);
        if (check) {
            PayloadCheck.reset(rank.scratch());
        }
        KernelArgs args = args(bytes, chunkBytes, iterations);
        kernel.launch(blocks, threads, 0, s, args); // warm-up
        double[] gbps = new double[repetitions];
        for (int rep = 0; rep < repetitions; rep++) {
            long seed = PayloadCheckDescriptor.seed(++salt, rep, PayloadCheckDescriptor.ROLE_INITIATOR);
            if (check) {
                patternKernel("gda4j_payload_fill", KernelArgs.create().pointer(rank.deviceView()).i64(src.offset())
                        .i64(bytes).u64(seed));
            }
            start.record(s);
            kernel.launch(blocks, threads, 0, s, args);
            stop.record(s);
            stop.synchronize();
            gbps[rep] = rate(bytes, iterations, stop.elapsedMillisSince(start));
            if (check) {
                copyBackFromPeer(bytes);
                patternKernel("gda4j_payload_verify", KernelArgs.create().pointer(rank.deviceView()).i64(dst.offset())
                        .i64(bytes).u64(seed).u64(rep).pointer(rank.scratch().pointer()
                                .plusBytes(PayloadCheckDescriptor.RECORD_OFFSET)));
            }
        }
        s.synchronize();
        world.checkErrors();
        int st = (int) rank.scratch().readLong(0);
        if (st != 0) {
            throw new IllegalStateException("put bandwidth kernel ended with device status " + st);
        }
        if (check) {
            PayloadCheck.requireIntact(List.of(PayloadCheck.Result.read(peerNumber, rank.scratch())),
                    "put payloads", bytes, receiver -> rank.rank());
        }
        return gbps;
    }

    /** A fill or verify kernel over this rank's heap, a grid of two blocks per multiprocessor, on its stream. */
    private void patternKernel(String name, KernelArgs args) {
        rank.kernel(PingPong.MODULE, name).launch(2 * rank.device().multiprocessorCount(), 512, 0, rank.stream(), args);
    }

    /**
     * Copies [dst, dst + bytes) of the peer's heap into the same range of this rank's (which no one-directional put
     * writes), with the copy engine: cuMemcpyPeerAsync, or a copy out of the IPC mapping of another process's heap.
     */
    private void copyBackFromPeer(long bytes) {
        DevicePointer here = DevicePointer.of(rank.heapBase() + dst.offset());
        Optional<Rank> local = world.localRank(peerNumber);
        if (local.isPresent()) {
            Rank p = local.get();
            rank.stream().copyPeerAsync(here, rank.context(), DevicePointer.of(p.heapBase() + dst.offset()),
                    p.context(), bytes);
        } else {
            rank.stream().copyAsync(here, DevicePointer.of(((ProcessWorld) world).peerHeapAddress(peerNumber)
                    + dst.offset()), bytes);
        }
    }

    /**
     * Both directions at once (this rank to the peer, and {@code back}: the peer to this rank), {@code repetitions}
     * times: the sum of the two rates of each, median over repetitions, in GB/s. Both ranks are in this process.
     */
    double bidirectional(PutBandwidth back, long bytes, int blocks, int threads, long chunkBytes, int iterations,
                         int repetitions) {
        double[] sum = new double[repetitions];
        KernelArgs there = args(bytes, chunkBytes, iterations);
        KernelArgs here = back.args(bytes, chunkBytes, iterations);
        rank.scratch().writeLong(0, 0);
        back.rank.scratch().writeLong(0, 0);
        for (int rep = 0; rep <= repetitions; rep++) { // the first is a warm-up
            rank.synchronize();
            back.rank.synchronize();
            start.record(rank.stream());
            back.start.record(back.rank.stream());
            kernel.launch(blocks, threads, 0, rank.stream(), there);
            back.kernel.launch(blocks, threads, 0, back.rank.stream(), here);
            stop.record(rank.stream());
            back.stop.record(back.rank.stream());
            stop.synchronize();
            back.stop.synchronize();
            if (rep > 0) {
                sum[rep - 1] = rate(bytes, iterations, stop.elapsedMillisSince(start))
                        + rate(bytes, iterations, back.stop.elapsedMillisSince(back.start));
            }
        }
        world.checkErrors();
        for (Rank r : List.of(rank, back.rank)) {
            int st = (int) r.scratch().readLong(0);
            if (st != 0) {
                throw new IllegalStateException("put bandwidth kernel on rank " + r.rank() + " ended with device"
                        + " status " + st);
            }
        }
        return median(sum);
    }

    private KernelArgs args(long bytes, long chunkBytes, int iterations) {
        return KernelArgs.create().pointer(rank.deviceView()).i32(peerNumber).i64(dst.offset())
                .i64(src.offset()).i64(bytes).i64(chunkBytes).u32(iterations).pointer(rank.scratch().pointer());
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

    /** Closes this direction's events; the buffers stay with the world's heap. */
    @Override
    public void close() {
        stop.close();
        start.close();
    }
}
