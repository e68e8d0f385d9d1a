package io.gda4j.samples;

import io.gda4j.cuda.DeviceMemory;
import io.gda4j.cuda.KernelArgs;
import io.gda4j.world.Rank;
import io.gda4j.world.World;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * The proxy's trigger FIFO alone (kernel {@code gda4j_fifo_roundtrip}): one GPU thread pushes NOP triggers to the
 * channel rank -> peer and the proxy thread pops and drops them. Each method takes whether the triggers are stored as
 * a put's are (released at system scope) or as a signal's (relaxed).
 * <ul>
 *   <li>{@link #roundTrips}: after each push the GPU thread waits until the proxy's tail passed it: publish, the proxy
 *       sees the slot and pops it, the GPU sees the new tail over PCIe. Timed per trigger on the GPU.</li>
 *   <li>{@link #pipelinedNanos}: pushes back to back and waits once for the last pop; total / count is what a
 *       trigger costs a pusher that does not wait (the FIFO's throughput limit for one thread).</li>
 * </ul>
 */
final class FifoRoundTrip implements AutoCloseable {
    private final World world;
    private final Rank rank;
    private final int peer;
    private final DeviceMemory rtt;
    private final int maxIterations;

    FifoRoundTrip(World world, int rank, int peer, int maxIterations) {
        this.world = world;
        this.rank = world.rank(rank);
        this.peer = peer;
        this.maxIterations = maxIterations;
        this.rtt = this.rank.context().allocate(4L * maxIterations + 8);
        world.loadModules(PingPong.MODULE);
    }

    /**
     * Per-trigger round trips, push to seen-popped, in nanoseconds. {@code release}: each trigger is stored as a put's
     * is (a system-scope release), else as a signal's (relaxed).
     */
    LatencyStats roundTrips(int warmup, int iterations, boolean release) {
        if (iterations > maxIterations) {
            throw new IllegalArgumentException("at most " + maxIterations + " iterations");
        }
        launch(warmup, iterations, true, release);
        int[] nanos = new int[iterations];
        byte[] raw = new byte[4 * iterations];
        rtt.copyToHost(0, raw, 0, raw.length);
        ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(nanos);
        return LatencyStats.of(nanos, iterations);
    }

    /** Nanoseconds per trigger of {@code iterations} pushes back to back, one figure per repetition, sorted. */
    double[] pipelinedNanos(int warmup, int iterations, int repetitions, boolean release) {
        double[] perTrigger = new double[repetitions];
        for (int r = 0; r < repetitions; r++) {
            launch(r == 0 ? warmup : 0, iterations, false, release);
            perTrigger[r] = (double) rtt.readLong(4L * maxIterations) / iterations;
        }
        Arrays.sort(perTrigger);
        return perTrigger;
    }

    private void launch(int warmup, int iterations, boolean syncEach, boolean release) {
        rank.scratch().writeLong(0, 0);
        rank.kernel(PingPong.MODULE, "gda4j_fifo_roundtrip").launch(1, 1, 0, rank.stream(), KernelArgs.create()
                .pointer(rank.deviceView()).i32(peer).u32(warmup).u32(iterations).i32(syncEach ? 1 : 0)
                .i32(release ? 1 : 0)
                .pointer(rtt.pointer()).pointer(rtt.pointer().plusBytes(4L * maxIterations))
                .pointer(rank.scratch().pointer()));
        rank.synchronize();
        world.checkErrors();
        int st = (int) rank.scratch().readLong(0);
        if (st != 0) {
            throw new IllegalStateException("FIFO round trip on rank " + rank.rank() + " ended with device status " + st);
        }
    }

    @Override
    public void close() {
        rtt.close();
    }
}
