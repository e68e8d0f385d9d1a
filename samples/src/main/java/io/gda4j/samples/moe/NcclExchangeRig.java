package io.gda4j.samples.moe;

import io.gda4j.cuda.CudaStream;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.samples.nccl.AllToAllV;
import io.gda4j.samples.nccl.NcclComms;
import io.gda4j.world.Rank;
import io.gda4j.world.World;

import java.util.List;

/**
 * What both NCCL baselines run on: a communicator per rank this process drives (every rank's in one process, with
 * {@code ncclCommInitAll}; its own in a world of one rank per process, with {@code ncclCommInitRank}), a send and a
 * receive buffer of the same size on each of those ranks' GPUs; the exchanges are timed as gda4j's calls are
 * ({@link GatedSteps}). The baselines differ only in the rows their plans move. Arrays are indexed by world rank, null where another process drives it.
 */
final class NcclExchangeRig implements AutoCloseable {
    private final World world;
    private final List<Rank> ranks;
    private final NcclComms comms;
    private final DeviceMemory[] send;
    private final DeviceMemory[] recv;

    /**
     * Buffers of {@code bytes} on every rank {@code world} drives here, and communicators. In a world of several
     * processes every process constructs its rig at the same point (rank 0's NCCL unique id travels over the world's
     * all-gather, then every process joins {@code ncclCommInitRank}); NCCL must be there in all of them
     * ({@link MoeNcclBaseline#unavailableReason(World)} agrees on it).
     */
    NcclExchangeRig(World world, long bytes) {
        this.world = world;
        this.ranks = world.localRanks();
        int n = world.size();
        if (ranks.size() != n && ranks.size() != 1) {
            throw new IllegalArgumentException("the NCCL baseline drives every rank of the world or one rank per process;"
                    + " this process drives " + ranks.size() + " of " + n);
        }
        send = new DeviceMemory[n];
        recv = new DeviceMemory[n];
        NcclComms made = null;
        try {
            for (Rank r : ranks) {
                int i = r.rank();
                send[i] = r.context().allocate(bytes);
                recv[i] = r.context().allocate(bytes);
                send[i].fill((byte) 0x3c);
            }
            made = openComms(world, ranks);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
        this.comms = made;
    }

    /**
     * Communicators over {@code world}: every rank's with {@code ncclCommInitAll} where this process drives them all
     * ({@code ranks}), else this process's one rank's with {@code ncclCommInitRank} (every process calls it at the same
     * point).
     */
    static NcclComms openComms(World world, List<Rank> ranks) {
        if (ranks.size() == world.size()) {
            return NcclComms.initAll(devices(ranks));
        }
        Rank mine = ranks.get(0);
        mine.context().makeCurrent();   // ncclCommInitRank takes the calling thread's current device
        return NcclComms.initRank(world.size(), mine.rank(), world::allGather);
    }

    static int[] devices(List<Rank> ranks) {
        int[] d = new int[ranks.size()];
        for (Rank r : ranks) {
            d[r.rank()] = r.device().ordinal();
        }
        return d;
    }

    /**
     * Runs {@code warmup + iterations} exchanges of the plans' dispatch then their combine (which sends the received
     * rows back: from the receive buffer into the send buffer), timed with events on each rank's stream from the
     * exchange's start to its end; per iteration the slowest rank's time, over every process. One untimed exchange each
     * way comes first (NCCL connects peers on their first exchange, on the host), and each iteration is queued behind
     * a {@link LaunchGate}, as gda4j's calls are, so neither side's times count the host's launches (in a world of
     * several processes it starts on every rank at the gate's start line).
     */
    MoeNcclBaseline.Timing time(NcclPlans plans, int warmup, int iterations) {
        AllToAllV dispatch = plans.dispatch();
        AllToAllV combine = plans.combine();
        int n = world.size();
        long[] sendAt = new long[n];
        long[] recvAt = new long[n];
        CudaStream[] streams = new CudaStream[n];
        for (Rank r : ranks) {
            sendAt[r.rank()] = send[r.rank()].address();
            recvAt[r.rank()] = recv[r.rank()].address();
            streams[r.rank()] = r.stream();
        }
        dispatch.launch(comms, sendAt, recvAt, streams);
        combine.launch(comms, recvAt, sendAt, streams);
        for (Rank r : ranks) {
            r.synchronize();
        }
        // Events 0, 1 and 2 before the dispatch exchange, between the two and after the combine exchange.
        try (GatedSteps steps = new GatedSteps(world, 3)) {
            double[][] t = steps.time(warmup, iterations, new int[][] {{0, 1}, {1, 2}}, world::checkErrors, ev -> {
                for (Rank r : ranks) {
                    ev[r.rank()][0].record(r.stream());
                }
                dispatch.launch(comms, sendAt, recvAt, streams);
                for (Rank r : ranks) {
                    ev[r.rank()][1].record(r.stream());
                }
                combine.launch(comms, recvAt, sendAt, streams);
                for (Rank r : ranks) {
                    ev[r.rank()][2].record(r.stream());
                }
            }, i -> { });
            return new MoeNcclBaseline.Timing(t[0], t[1]);
        }
    }

    /**
     * One exchange of {@code plan} with {@code data[r]} (rank r's packed send buffer) as input, for the ranks this
     * process drives; returns their received bytes ({@code plan.recvTotal(r)} of them; null for other ranks). For
     * checks, not timing.
     */
    byte[][] exchange(AllToAllV plan, byte[][] data) {
        int n = world.size();
        long[] sendAt = new long[n];
        long[] recvAt = new long[n];
        CudaStream[] streams = new CudaStream[n];
        for (Rank r : ranks) {
            int i = r.rank();
            if (data[i].length != plan.sendTotal(i) || plan.recvTotal(i) > recv[i].sizeBytes()) {
                throw new IllegalArgumentException("rank " + i + ": " + data[i].length + " bytes to send, the plan sends "
                        + plan.sendTotal(i) + " and receives " + plan.recvTotal(i));
            }
            send[i].copyFromHost(0, data[i], 0, data[i].length);
            sendAt[i] = send[i].address();
            recvAt[i] = recv[i].address();
            streams[i] = r.stream();
        }
        plan.launch(comms, sendAt, recvAt, streams);
        byte[][] got = new byte[n][];
        for (Rank r : ranks) {
            r.synchronize();
            got[r.rank()] = new byte[Math.toIntExact(plan.recvTotal(r.rank()))];
            recv[r.rank()].copyToHost(0, got[r.rank()], 0, got[r.rank()].length);
        }
        return got;
    }

    @Override
    public void close() {
        RuntimeException failure = null;
        if (comms != null) {
            try {
                comms.close();
            } catch (RuntimeException e) {
                failure = e;
            }
        }
        for (DeviceMemory[] group : new DeviceMemory[][] {send, recv}) {
            for (DeviceMemory m : group) {
                if (m != null) {
                    m.close();
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
