package io.gda4j.samples.moe;

import io.gda4j.cuda.CudaEvent;
import io.gda4j.world.Rank;
import io.gda4j.world.World;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.function.IntConsumer;

/**
 * The event timing both MoE rigs share: steps queued on every rank this process drives behind one {@link LaunchGate}
 * and released at once (in a world of several processes, at the gate's start line across them), so the times leave
 * out the host's launches, which one process makes rank after rank. Each local rank has its own timing events; a step
 * records them where it wants a boundary, and a span is the time between two of them, per iteration the slowest
 * rank's over every process. What a step queues is the rig's (the high-throughput or the low-latency calls).
 * Construct it, like the gate, while no kernel of this process runs, and at the same point in every process.
 */
final class GatedSteps implements AutoCloseable {
    /** What one step queues on every local rank; {@code events[r]} are local rank r's (null for other ranks). */
    interface Step {
        void queue(CudaEvent[][] events);
    }

    private final World world;
    /** The ranks this process drives: all of them in one JVM, its own in a multi-process world. */
    private final int[] locals;
    private final CudaEvent[][] events;
    private final LaunchGate gate;

    /** {@code eventsPerRank} timing events on each local rank, and the gate. */
    GatedSteps(World world, int eventsPerRank) {
        this.world = world;
        List<Rank> ranks = world.localRanks();
        this.locals = ranks.stream().mapToInt(Rank::rank).toArray();
        this.events = new CudaEvent[world.size()][];
        LaunchGate g = null;
        try {
            for (Rank r : ranks) {
                events[r.rank()] = new CudaEvent[eventsPerRank];
                for (int e = 0; e < eventsPerRank; e++) {
                    events[r.rank()][e] = r.context().createEvent();
                }
            }
            g = new LaunchGate(world);
        } catch (RuntimeException e) {
            closeEvents();
            throw e;
        }
        this.gate = g;
    }

    /** The ranks this process drives. */
    int[] locals() {
        return locals.clone();
    }

    /**
     * Runs {@code warmup + iterations} steps after a barrier of the world's processes: each is queued on every local
     * rank behind the gate and released at once, then every local rank's stream is synchronized and
     * {@code checkErrors} runs (the buffer's, which names a MoE timeout). After each timed iteration {@code timed}
     * gets its number (from 0), to read what the step left behind. Returns, per span {@code spans[s] = {from, to}}
     * (event indices), per iteration the slowest rank's milliseconds between the two events, over every process.
     */
    double[][] time(int warmup, int iterations, int[][] spans, Runnable checkErrors, Step step, IntConsumer timed) {
        double[][] t = new double[spans.length][iterations];
        world.barrier();
        for (int i = -warmup; i < iterations; i++) {
            try {
                for (int r : locals) {
                    gate.hold(world.rank(r));
                }
                step.queue(events);
            } finally {
                gate.open();
            }
            for (int r : locals) {
                world.rank(r).synchronize();
            }
            checkErrors.run();
            if (i < 0) {
                continue;
            }
            for (int r : locals) {
                for (int s = 0; s < spans.length; s++) {
                    t[s][i] = Math.max(t[s][i], events[r][spans[s][1]].elapsedMillisSince(events[r][spans[s][0]]));
                }
            }
            timed.accept(i);
        }
        gate.checkStartLine();
        for (int s = 0; s < spans.length; s++) {
            t[s] = slowestOfEveryProcess(world, t[s]);
        }
        return t;
    }

    /**
     * Per iteration the largest of every process's figures (in one JVM, {@code mine} itself): each process times its
     * own ranks, and a call's time is its slowest rank's. Every process of the world must call it.
     */
    static double[] slowestOfEveryProcess(World world, double[] mine) {
        ByteBuffer b = ByteBuffer.allocate(8 * mine.length).order(ByteOrder.LITTLE_ENDIAN);
        for (double v : mine) {
            b.putDouble(v);
        }
        return slowest(mine, world.allGather(b.array()));
    }

    /** {@code mine} raised, per iteration, to the largest figure of {@code gathered} (each process's, as doubles). */
    static double[] slowest(double[] mine, byte[][] gathered) {
        double[] max = mine.clone();
        for (byte[] other : gathered) {
            if (other.length != 8 * mine.length) {
                throw new IllegalStateException("a process sent " + other.length / 8 + " timings, this one has "
                        + mine.length + ": every process must time the same iterations");
            }
            ByteBuffer o = ByteBuffer.wrap(other).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < max.length; i++) {
                max[i] = Math.max(max[i], o.getDouble(8 * i));
            }
        }
        return max;
    }

    private void closeEvents() {
        for (CudaEvent[] group : events) {
            for (CudaEvent e : group == null ? new CudaEvent[0] : group) {
                if (e != null) {
                    e.close();
                }
            }
        }
    }

    /** Closes the gate and the events. */
    @Override
    public void close() {
        try {
            gate.close();
        } finally {
            closeEvents();
        }
    }
}
