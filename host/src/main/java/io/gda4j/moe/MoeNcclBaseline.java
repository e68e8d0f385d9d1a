package io.gda4j.moe;

import io.gda4j.cuda.CudaEvent;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.nccl.AllToAllV;
import io.gda4j.nccl.NcclComms;
import io.gda4j.world.Rank;
import io.gda4j.world.World;

import java.util.List;

import jcuda.driver.CUstream;

/**
 * NCCL's all-to-all-v of the same routing, the baseline {@code gda4j moe} compares dispatch and combine with: rank r
 * sends rank p the rows of its tokens that have an expert on p (dispatch: payload plus FP8 scales per row, the bytes
 * DeepEP's bandwidth counts), and p sends them back as BF16 rows (combine), each rank's own rows included. The buffers
 * are packed by peer beforehand; the packing and the experts' reduction are not timed, only the exchange.
 *
 * <p>Needs libnccl.so.2 and one GPU per rank ({@link #unavailableReason(World)} says which is missing). Buffers are
 * allocated for the config's largest exchange up front, before any kernel runs.
 */
public final class MoeNcclBaseline implements AutoCloseable {
    private final MoeSizing s;
    private final List<Rank> ranks;
    private final NcclComms comms;
    private final DeviceMemory[] send;
    private final DeviceMemory[] recv;
    private final CudaEvent[][] events;

    /** Event-timed exchanges, per iteration the slowest rank's time. */
    public record Timing(double[] dispatchMillis, double[] combineMillis) {
    }

    /** Why NCCL cannot run in {@code world}: "NCCL not found ...", "NCCL needs one GPU per rank ...", or null. */
    public static String unavailableReason(World world) {
        return NcclComms.unavailableReason(devices(world.localRanks()));
    }

    private static int[] devices(List<Rank> ranks) {
        int[] d = new int[ranks.size()];
        for (Rank r : ranks) {
            d[r.rank()] = r.device().ordinal();
        }
        return d;
    }

    /** Communicators over the buffer's world (all ranks local, one GPU each) and buffers for its config. */
    public MoeNcclBaseline(MoeBuffer buffer) {
        this.s = buffer.sizing();
        this.ranks = buffer.world().localRanks();
        if (ranks.size() != s.worldSize()) {
            throw new IllegalArgumentException("the NCCL baseline drives every rank: it needs a world whose ranks are all local");
        }
        int n = s.worldSize();
        // Each direction moves at most every token to every rank: maxRecvTokens rows of the wider row.
        long bytes = Math.max(16, (long) s.maxRecvTokens() * Math.max(dispatchRowBytes(s), s.combineRowBytes()));
        send = new DeviceMemory[n];
        recv = new DeviceMemory[n];
        events = new CudaEvent[n][3];
        NcclComms c = null;
        try {
            for (Rank r : ranks) {
                int i = r.rank();
                send[i] = r.context().allocate(bytes);
                recv[i] = r.context().allocate(bytes);
                send[i].fill((byte) 0x3c);
                for (int e = 0; e < 3; e++) {
                    events[i][e] = r.context().createEvent();
                }
            }
            c = NcclComms.initAll(devices(ranks));
        } catch (RuntimeException e) {
            close();
            throw e;
        }
        this.comms = c;
    }

    /** Bytes of a dispatched row that DeepEP counts and the baseline moves: the payload and the FP8 scales. */
    static long dispatchRowBytes(MoeSizing s) {
        return s.payloadBytes() + 4L * s.scalesPerRow();
    }

    /**
     * Rows rank s sends rank d in a dispatch: its tokens with at least one expert on d ({@code topk[s]} is rank s's
     * {@code tokens[s] x topK} expert indices, -1 = none).
     */
    static long[][] dispatchRows(int[][] topk, int[] tokens, int topK, int numExperts, int worldSize) {
        int local = numExperts / worldSize;
        long[][] rows = new long[worldSize][worldSize];
        for (int src = 0; src < worldSize; src++) {
            for (int t = 0; t < tokens[src]; t++) {
                boolean[] to = new boolean[worldSize];
                for (int k = 0; k < topK; k++) {
                    int e = topk[src][t * topK + k];
                    if (e >= 0) {
                        to[e / local] = true;
                    }
                }
                for (int d = 0; d < worldSize; d++) {
                    if (to[d]) {
                        rows[src][d]++;
                    }
                }
            }
        }
        return rows;
    }

    /** The dispatch exchange of a routing. */
    public static AllToAllV dispatchPlan(MoeSizing s, int[][] topk, int[] tokens) {
        MoeConfig c = s.config();
        return AllToAllV.ofRows(dispatchRows(topk, tokens, c.topK(), c.numExperts(), s.worldSize()), dispatchRowBytes(s));
    }

    /** The combine exchange of a routing: every dispatched row back to its source, in BF16. */
    public static AllToAllV combinePlan(MoeSizing s, int[][] topk, int[] tokens) {
        MoeConfig c = s.config();
        return AllToAllV.ofRows(AllToAllV.transpose(dispatchRows(topk, tokens, c.topK(), c.numExperts(), s.worldSize())),
                s.combineRowBytes());
    }

    /**
     * Runs {@code warmup + iterations} dispatch + combine exchanges of routing {@code kind} ({@code tokens[r]} on rank
     * r), timed with events on each rank's stream from the exchange's launch to its end.
     */
    public Timing time(MoeRouting.Kind kind, long seed, int[] tokens, int warmup, int iterations) {
        MoeConfig c = s.config();
        int n = s.worldSize();
        java.util.Random rnd = new java.util.Random(seed);
        int[][] topk = new int[n][];
        for (int r = 0; r < n; r++) {
            topk[r] = MoeRouting.topk(kind, tokens[r], c.topK(), c.numExperts(), n, rnd);
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
            // combine sends the received rows back: from the receive buffer into the send buffer
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
        return new Timing(d, cm);
    }

    /**
     * One exchange of {@code plan} with {@code data[r]} (rank r's packed send buffer) as input; returns each rank's
     * received bytes ({@code plan.recvTotal(r)} of them). For checks, not timing.
     */
    byte[][] exchange(AllToAllV plan, byte[][] data) {
        int n = s.worldSize();
        long[] sendAt = new long[n];
        long[] recvAt = new long[n];
        CUstream[] streams = new CUstream[n];
        for (Rank r : ranks) {
            int i = r.rank();
            if (data[i].length != plan.sendTotal(i) || plan.recvTotal(i) > recv[i].sizeBytes()) {
                throw new IllegalArgumentException("rank " + i + ": " + data[i].length + " bytes to send, the plan sends "
                        + plan.sendTotal(i) + " and receives " + plan.recvTotal(i));
            }
            send[i].copyFromHost(0, data[i], 0, data[i].length);
            sendAt[i] = send[i].address();
            recvAt[i] = recv[i].address();
            streams[i] = r.stream().handle();
        }
        plan.launch(comms, sendAt, recvAt, streams);
        byte[][] got = new byte[n][];
        for (Rank r : ranks) {
            r.stream().synchronize();
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
