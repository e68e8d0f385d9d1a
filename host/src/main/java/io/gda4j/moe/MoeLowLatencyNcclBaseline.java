package io.gda4j.moe;

import io.gda4j.cuda.CudaEvent;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.nccl.AllToAllV;
import io.gda4j.nccl.NcclComms;
import io.gda4j.world.Rank;

import jcuda.driver.CUstream;

import java.util.List;

/**
 * NCCL's all-to-all-v of the same routing as a low-latency dispatch and combine, the baseline
 * {@code gda4j moe --mode low-latency} compares with: rank s sends rank d one row per (token, distinct expert on d)
 * of its top-k (dispatch: payload plus FP8 scales, the bytes the low-latency dispatch moves), and d sends each back
 * as a BF16 row (combine). Buffers are packed by peer beforehand; packing, the FP8 cast and the weighted sum are not
 * timed, only the exchange. Needs libnccl.so.2 and one GPU per rank ({@link MoeNcclBaseline#unavailableReason}).
 */
public final class MoeLowLatencyNcclBaseline implements AutoCloseable {
    private final MoeLowLatencySizing s;
    private final List<Rank> ranks;
    private final NcclComms comms;
    private final DeviceMemory[] send;
    private final DeviceMemory[] recv;
    private final CudaEvent[][] events;

    /** Communicators over the buffer's world (all ranks local, one GPU each) and buffers for its config. */
    public MoeLowLatencyNcclBaseline(MoeLowLatencyBuffer buffer) {
        this.s = buffer.sizing();
        this.ranks = buffer.world().localRanks();
        int n = s.worldSize();
        if (ranks.size() != n) {
            throw new IllegalArgumentException("the NCCL baseline drives every rank: it needs a world whose ranks are all local");
        }
        MoeLowLatencyConfig c = s.config();
        // A rank sends or receives at most maxTokensPerRank rows per expert it sends to or holds.
        long rows = (long) c.maxTokensPerRank() * Math.max(c.topK(), s.numLocalExperts()) * n;
        long bytes = Math.max(16, rows * Math.max(dispatchRowBytes(s), 2L * c.hidden()));
        send = new DeviceMemory[n];
        recv = new DeviceMemory[n];
        events = new CudaEvent[n][3];
        NcclComms made = null;
        try {
            int[] devices = new int[n];
            for (Rank r : ranks) {
                int i = r.rank();
                devices[i] = r.device().ordinal();
                send[i] = r.context().allocate(bytes);
                recv[i] = r.context().allocate(bytes);
                send[i].fill((byte) 0x3c);
                for (int e = 0; e < 3; e++) {
                    events[i][e] = r.context().createEvent();
                }
            }
            made = NcclComms.initAll(devices);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
        this.comms = made;
    }

    /** Bytes of a dispatched row: the payload and the FP8 scales. */
    static long dispatchRowBytes(MoeLowLatencySizing s) {
        return s.payloadBytes() + 4L * s.scalesPerRow();
    }

    /** Rows rank s sends rank d: one per (token, distinct expert of its top-k held by d). */
    static long[][] dispatchRows(int[][] topk, int[] tokens, int topK, int numExperts, int worldSize) {
        int local = numExperts / worldSize;
        long[][] rows = new long[worldSize][worldSize];
        for (int src = 0; src < worldSize; src++) {
            for (int t = 0; t < tokens[src]; t++) {
                for (int k = 0; k < topK; k++) {
                    int e = topk[src][t * topK + k];
                    boolean repeat = false;
                    for (int j = 0; j < k && !repeat; j++) {
                        repeat = topk[src][t * topK + j] == e;
                    }
                    if (e >= 0 && !repeat) {
                        rows[src][e / local]++;
                    }
                }
            }
        }
        return rows;
    }

    public static AllToAllV dispatchPlan(MoeLowLatencySizing s, int[][] topk, int[] tokens) {
        MoeLowLatencyConfig c = s.config();
        return AllToAllV.ofRows(dispatchRows(topk, tokens, c.topK(), c.numExperts(), s.worldSize()), dispatchRowBytes(s));
    }

    public static AllToAllV combinePlan(MoeLowLatencySizing s, int[][] topk, int[] tokens) {
        MoeLowLatencyConfig c = s.config();
        return AllToAllV.ofRows(AllToAllV.transpose(dispatchRows(topk, tokens, c.topK(), c.numExperts(), s.worldSize())),
                2L * c.hidden());
    }

    /** Event-timed exchanges, per iteration the slowest rank's time (ms). */
    public MoeNcclBaseline.Timing time(MoeLowLatencyRouting.Kind kind, long seed, int[] tokens, int warmup,
                                       int iterations) {
        MoeLowLatencyConfig c = s.config();
        int n = s.worldSize();
        java.util.Random rnd = new java.util.Random(seed);
        int[][] topk = new int[n][];
        for (int r = 0; r < n; r++) {
            topk[r] = MoeLowLatencyRouting.topk(kind, tokens[r], c.topK(), c.numExperts(), n, rnd);
        }
        AllToAllV dispatch = dispatchPlan(s, topk, tokens);
        AllToAllV combine = combinePlan(s, topk, tokens);
        long[] sendAt = new long[n];
        long[] recvAt = new long[n];
        CUstream[] streams = new CUstream[n];
        for (Rank r : ranks) {
            sendAt[r.rank()] = send[r.rank()].address();
            recvAt[r.rank()] = recv[r.rank()].address();
            streams[r.rank()] = r.stream().handle();
        }
        double[] d = new double[iterations];
        double[] cm = new double[iterations];
        for (int i = -warmup; i < iterations; i++) {
            for (Rank r : ranks) {
                events[r.rank()][0].record(r.stream());
            }
            dispatch.launch(comms, sendAt, recvAt, streams);
            for (Rank r : ranks) {
                events[r.rank()][1].record(r.stream());
            }
            combine.launch(comms, recvAt, sendAt, streams);
            for (Rank r : ranks) {
                events[r.rank()][2].record(r.stream());
            }
            for (Rank r : ranks) {
                r.stream().synchronize();
            }
            if (i >= 0) {
                for (int r = 0; r < n; r++) {
                    d[i] = Math.max(d[i], events[r][1].elapsedMillisSince(events[r][0]));
                    cm[i] = Math.max(cm[i], events[r][2].elapsedMillisSince(events[r][1]));
                }
            }
        }
        return new MoeNcclBaseline.Timing(d, cm);
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
        for (CudaEvent[] group : events) {
            for (CudaEvent e : group) {
                if (e != null) {
                    e.close();
                }
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
