package io.gda4j.samples.moe;

import io.gda4j.cuda.CudaEvent;
import io.gda4j.cuda.CudaStream;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.cuda.Kernel;
import io.gda4j.cuda.KernelArgs;
import io.gda4j.cuda.MappedHostMemory;
import io.gda4j.cuda.ModuleImage;
import io.gda4j.moe.MoeBuffer;
import io.gda4j.moe.check.MoeRouting;
import io.gda4j.moe.ht.HighThroughputPart;
import io.gda4j.moe.ht.HighThroughputSizing;
import io.gda4j.samples.nccl.AllGather;
import io.gda4j.samples.nccl.LibNccl;
import io.gda4j.samples.nccl.NcclComms;
import io.gda4j.world.Rank;
import io.gda4j.world.World;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * MoE over NCCL as a training framework runs it, the "framework" column of {@code gda4j moe}: what Megatron's
 * all-to-all token dispatcher does, on the same routing as gda4j's calls. Dispatch: each rank counts its (token,
 * slot) pairs per expert, all-gathers the counts ({@code ncclAllGather}), copies them to the host and waits for them
 * (the host synchronisation that sizes the exchange), permutes its tokens into one row per (token, expert) sorted by
 * expert, exchanges them with NCCL's all-to-all-v, and regroups the received chunks by local expert. Combine: the
 * expert outputs regrouped back by source, the all-to-all-v back, and each token's rows summed with its routing
 * weights. Every row moves as often as the token names an expert of the rank, where gda4j sends a token once per
 * rank; the rows are payload plus FP8 scales one way and BF16 back, as in {@link MoeNcclBaseline}.
 *
 * <p>Timed as the other columns: each step queued on every rank behind a {@link LaunchGate}, CUDA events on each
 * rank's stream, per iteration the slowest rank's time. The host's wait for the counts sits in the dispatch's time,
 * as it does in a framework: the step is queued up to the counts' copy to the host, the gate opens, the host reads the
 * counts of every rank it drives and plans the exchange, then queues the rest of the step behind a second gate.
 * Needs what {@link MoeNcclBaseline} needs ({@link MoeNcclBaseline#unavailableReason}). The GPU steps are the kernels
 * of {@code samples/kernels/moe_framework.cu}; the expert outputs are whatever memory holds (no expert runs).
 */
public final class MoeFrameworkNcclBaseline implements AutoCloseable {
    /** The kernels' module, a class-path resource of this module. */
    static final String RESOURCE = "io/gda4j/samples/moe_framework.ptx";
    private static final int THREADS = 256;

    private final World world;
    private final HighThroughputSizing s;
    private final List<Rank> ranks;
    private final ModuleImage image;
    private final NcclComms comms;
    /** By world rank (null where another process drives it). */
    private final RankMemory[] memory;

    /** What one rank's steps use. */
    private static final class RankMemory implements AutoCloseable {
        final List<AutoCloseable> owned = new ArrayList<>();
        DeviceMemory x, topk, weights, counts, cursor, gathered, map, permuted, received, sorted, y, out;
        MappedHostMemory gatheredHost;
        /** Start, counts copied, dispatched, combined. */
        CudaEvent[] events = new CudaEvent[4];

        DeviceMemory allocate(Rank r, long bytes) {
            DeviceMemory m = r.context().allocate(Math.max(16, bytes));
            owned.add(m);
            return m;
        }

        @Override
        public void close() {
            for (CudaEvent e : events) {
                if (e != null) {
                    e.close();
                }
            }
            if (gatheredHost != null) {
                gatheredHost.close();
            }
            for (AutoCloseable a : owned) {
                try {
                    a.close();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
        }
    }

    /**
     * Communicators over the buffer's world (one GPU per rank), memory for its config's worst case (a rank receives at
     * most min(topK, local experts) rows of each token of every rank) and the kernels. In a world of several processes
     * every process constructs it at the same point.
     */
    public MoeFrameworkNcclBaseline(MoeBuffer buffer) {
        this.world = buffer.world();
        this.s = buffer.sizing();
        this.ranks = world.localRanks();
        this.image = ModuleImage.classPathResource(RESOURCE, MoeFrameworkNcclBaseline.class.getClassLoader());
        world.loadModules(image);
        HighThroughputPart c = s.config();
        int n = s.worldSize();
        long t = c.maxTokensPerRank();
        long pairs = t * c.topK();
        long received = (long) n * t * Math.min(c.topK(), s.numLocalExperts());
        long dispatchRow = MoeNcclBaseline.dispatchRowBytes(s);
        long widest = Math.max(dispatchRow, s.combineRowBytes());
        memory = new RankMemory[n];
        NcclComms made;
        try {
            for (Rank r : ranks) {
                RankMemory m = new RankMemory();
                memory[r.rank()] = m;
                m.x = m.allocate(r, t * dispatchRow);
                m.topk = m.allocate(r, pairs * 8);
                m.weights = m.allocate(r, pairs * 4);
                m.counts = m.allocate(r, 4L * c.numExperts());
                m.cursor = m.allocate(r, 4L * c.numExperts());
                m.gathered = m.allocate(r, 4L * n * c.numExperts());
                m.map = m.allocate(r, pairs * 4);
                m.permuted = m.allocate(r, pairs * widest);
                m.received = m.allocate(r, received * widest);
                m.sorted = m.allocate(r, received * dispatchRow);
                m.y = m.allocate(r, received * s.combineRowBytes());
                m.out = m.allocate(r, t * s.combineRowBytes());
                m.gatheredHost = r.context().allocateMappedHost(4L * n * c.numExperts());
                for (int e = 0; e < m.events.length; e++) {
                    m.events[e] = r.context().createEvent();
                }
            }
            made = NcclExchangeRig.openComms(world, ranks);
        } catch (RuntimeException e) {
            closeMemory(e);
            throw e;
        }
        this.comms = made;
    }

    /**
     * Rows rank s sends rank d: one per (token, slot) of s naming an expert of d, from the all-gathered counts
     * ({@code gathered[s][e]}: s's pairs naming expert e), as the framework sizes its all-to-all-v.
     */
    static long[][] rowsFromCounts(int[][] gathered, int localExperts) {
        int n = gathered.length;
        long[][] rows = new long[n][n];
        for (int src = 0; src < n; src++) {
            for (int e = 0; e < gathered[src].length; e++) {
                rows[src][e / localExperts] += gathered[src][e];
            }
        }
        return rows;
    }

    /** Per expert, the (token, slot) pairs of {@code topk} ({@code tokens x topK}, -1 = none) that name it. */
    static int[] countsPerExpert(int[] topk, int numExperts) {
        int[] counts = new int[numExperts];
        for (int e : topk) {
            if (e >= 0) {
                counts[e]++;
            }
        }
        return counts;
    }

    /**
     * Runs {@code warmup + iterations} framework dispatch + combine pairs of routing {@code kind} ({@code tokens[r]}
     * on rank r; the same routing the other columns draw from {@code seed}), and returns per iteration the slowest
     * rank's times over every process. One untimed pair comes first (NCCL connects peers on their first exchange).
     */
    public MoeNcclBaseline.Timing time(MoeRouting.Kind kind, long seed, int[] tokens, int warmup, int iterations) {
        HighThroughputPart c = s.config();
        int n = s.worldSize();
        Random rnd = new Random(seed);
        int[][] topk = NcclPlans.topkPerRank(n, r -> MoeRouting.topk(kind, tokens[r], c.topK(), c.numExperts(), n, rnd));
        for (Rank r : ranks) {
            upload(r, topk[r.rank()], c.topK());
        }
        double[] d = new double[iterations];
        double[] cm = new double[iterations];
        LaunchGate gate = new LaunchGate(world);
        try {
            world.barrier();
            for (int i = -warmup - 1; i < iterations; i++) {
                step(gate, tokens);
                for (Rank r : ranks) {
                    r.synchronize();
                }
                world.checkErrors();
                if (i >= 0) {
                    for (Rank r : ranks) {
                        CudaEvent[] ev = memory[r.rank()].events;
                        d[i] = Math.max(d[i], ev[2].elapsedMillisSince(ev[0]));
                        cm[i] = Math.max(cm[i], ev[3].elapsedMillisSince(ev[2]));
                    }
                }
            }
            gate.checkStartLine();
        } finally {
            gate.close();
        }
        return new MoeNcclBaseline.Timing(GatedSteps.slowestOfEveryProcess(world, d),
                GatedSteps.slowestOfEveryProcess(world, cm));
    }

    /** Rank r's top-k as INT64 and weights of 1 / topK. */
    private void upload(Rank r, int[] topk, int topK) {
        RankMemory m = memory[r.rank()];
        ByteBuffer idx = ByteBuffer.allocate(8 * topk.length).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer w = ByteBuffer.allocate(4 * topk.length).order(ByteOrder.LITTLE_ENDIAN);
        for (int e : topk) {
            idx.putLong(e);
            w.putFloat(1f / topK);
        }
        m.topk.copyFromHost(0, idx.array(), 0, idx.capacity());
        m.weights.copyFromHost(0, w.array(), 0, w.capacity());
    }

    /** One timed dispatch + combine on every local rank (the events of each rank's memory time it). */
    private void step(LaunchGate gate, int[] tokens) {
        HighThroughputPart c = s.config();
        int n = s.worldSize();
        int experts = c.numExperts();
        try {
            for (Rank r : ranks) {
                gate.hold(r);
            }
            for (Rank r : ranks) {
                RankMemory m = memory[r.rank()];
                CudaStream st = r.stream();
                int pairs = tokens[r.rank()] * c.topK();
                m.events[0].record(st);
                launch(r, "fw_zero", blocks(experts), KernelArgs.create().pointer(m.counts.pointer()).i32(experts));
                launch(r, "fw_zero", blocks(experts), KernelArgs.create().pointer(m.cursor.pointer()).i32(experts));
                launch(r, "fw_count", blocks(pairs), KernelArgs.create().pointer(m.topk.pointer()).i32(pairs)
                        .i32(experts).pointer(m.counts.pointer()));
            }
            long[] counts = new long[n];
            long[] gathered = new long[n];
            CudaStream[] streams = new CudaStream[n];
            for (Rank r : ranks) {
                counts[r.rank()] = memory[r.rank()].counts.address();
                gathered[r.rank()] = memory[r.rank()].gathered.address();
                streams[r.rank()] = r.stream();
            }
            AllGather.launch(comms, counts, gathered, experts, LibNccl.NCCL_INT32, streams);
            for (Rank r : ranks) {
                RankMemory m = memory[r.rank()];
                CudaStream st = r.stream();
                int pairs = tokens[r.rank()] * c.topK();
                st.copyAsync(m.gatheredHost.devicePointer(), m.gathered.pointer(), 4L * n * experts);
                m.events[1].record(st);
                // The permute does not need the host: a framework queues it before it waits for the counts.
                rank(r, "fw_map").launch(blocks(pairs), THREADS, 4 * experts, st, KernelArgs.create()
                        .pointer(m.topk.pointer()).i32(pairs).i32(experts).pointer(m.counts.pointer())
                        .pointer(m.cursor.pointer()).pointer(m.map.pointer()));
                launch(r, "fw_gather", warpBlocks(r, pairs), KernelArgs.create().pointer(m.x.pointer())
                        .pointer(m.map.pointer()).i32(pairs).i32(c.topK()).u64(MoeNcclBaseline.dispatchRowBytes(s))
                        .pointer(m.permuted.pointer()));
            }
        } finally {
            gate.open();
        }
        // The host synchronisation: every rank's gathered counts, then the exchange they size.
        int[][] gathered = null;
        for (Rank r : ranks) {
            RankMemory m = memory[r.rank()];
            m.events[1].synchronize();
            if (gathered == null) {
                gathered = readCounts(m.gatheredHost, n, experts);
            }
        }
        NcclPlans plans = NcclPlans.of(rowsFromCounts(gathered, s.numLocalExperts()),
                MoeNcclBaseline.dispatchRowBytes(s), s.combineRowBytes());
        long[] permuted = new long[n];
        long[] received = new long[n];
        CudaStream[] streams = new CudaStream[n];
        for (Rank r : ranks) {
            permuted[r.rank()] = memory[r.rank()].permuted.address();
            received[r.rank()] = memory[r.rank()].received.address();
            streams[r.rank()] = r.stream();
        }
        try {
            for (Rank r : ranks) {
                gate.hold(r);
            }
            plans.dispatch().launch(comms, permuted, received, streams);
            for (Rank r : ranks) {
                RankMemory m = memory[r.rank()];
                sortChunks(r, m.received, m.sorted, MoeNcclBaseline.dispatchRowBytes(s), true);
                m.events[2].record(r.stream());
                sortChunks(r, m.y, m.received, s.combineRowBytes(), false);
            }
            plans.combine().launch(comms, received, permuted, streams);
            for (Rank r : ranks) {
                RankMemory m = memory[r.rank()];
                int t = tokens[r.rank()];
                launch(r, "fw_unpermute", warpBlocks(r, t), KernelArgs.create().pointer(m.permuted.pointer())
                        .pointer(m.map.pointer()).pointer(m.weights.pointer()).i32(t).i32(c.topK()).i32(c.hidden())
                        .pointer(m.out.pointer()));
                m.events[3].record(r.stream());
            }
        } finally {
            gate.open();
        }
    }

    private void sortChunks(Rank r, DeviceMemory from, DeviceMemory to, long rowBytes, boolean toExpert) {
        int n = s.worldSize();
        int local = s.numLocalExperts();
        launch(r, "fw_sort_chunks", n * local, KernelArgs.create().pointer(from.pointer()).pointer(to.pointer())
                .pointer(memory[r.rank()].gathered.pointer()).i32(n).i32(r.rank()).i32(local)
                .i32(s.config().numExperts()).u64(rowBytes).i32(toExpert ? 1 : 0));
    }

    static int[][] readCounts(MappedHostMemory host, int n, int experts) {
        int[][] g = new int[n][experts];
        for (int src = 0; src < n; src++) {
            for (int e = 0; e < experts; e++) {
                g[src][e] = host.getInt(4 * (src * experts + e));
            }
        }
        return g;
    }

    private Kernel rank(Rank r, String kernel) {
        return r.kernel(image, kernel);
    }

    private void launch(Rank r, String kernel, int grid, KernelArgs args) {
        rank(r, kernel).launch(Math.max(1, grid), THREADS, 0, r.stream(), args);
    }

    private static int blocks(int items) {
        return Math.max(1, Math.min(1024, (items + THREADS - 1) / THREADS));
    }

    /** Blocks for a warp per item, at most two waves of the GPU (these kernels wait for nothing). */
    private static int warpBlocks(Rank r, int items) {
        int warps = THREADS / 32;
        return Math.max(1, Math.min(2 * r.device().multiprocessorCount(), (items + warps - 1) / warps));
    }

    /** Frees every rank's memory; the first failure becomes {@code first} or is added to it (returned). */
    private RuntimeException closeMemory(RuntimeException first) {
        RuntimeException failure = first;
        for (RankMemory m : memory) {
            if (m != null) {
                try {
                    m.close();
                } catch (RuntimeException e) {
                    if (failure == null) {
                        failure = e;
                    } else {
                        failure.addSuppressed(e);
                    }
                }
            }
        }
        return failure;
    }

    @Override
    public void close() {
        RuntimeException failure = null;
        try {
            comms.close();
        } catch (RuntimeException e) {
            failure = e;
        }
        failure = closeMemory(failure);
        if (failure != null) {
            throw failure;
        }
    }
}
