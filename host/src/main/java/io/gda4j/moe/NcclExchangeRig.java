package io.gda4j.moe;

import io.gda4j.cuda.CudaEvent;
import io.gda4j.cuda.DeviceMemory;
import io.gda4j.nccl.AllToAllV;
import io.gda4j.nccl.NcclComms;
import io.gda4j.world.Rank;

import java.util.List;

import jcuda.driver.CUstream;

/**
 * What both NCCL baselines run on: one communicator per rank, a send and a receive buffer of the same size on each
 * rank's GPU, and three events per rank for timing. The baselines differ only in the rows their plans move.
 */
final class NcclExchangeRig implements AutoCloseable {
    private final List<Rank> ranks;
    private final NcclComms comms;
    private final DeviceMemory[] send;
    private final DeviceMemory[] recv;
    private final CudaEvent[][] events;

    /** Buffers of {@code bytes} on every rank of {@code ranks} (all of the world's, indexed by rank). */
    NcclExchangeRig(List<Rank> ranks, long bytes) {
        this.ranks = ranks;
        int n = ranks.size();
        send = new DeviceMemory[n];
        recv = new DeviceMemory[n];
        events = new CudaEvent[n][3];
        NcclComms made = null;
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
            made = NcclComms.initAll(devices(ranks));
        } catch (RuntimeException e) {
            close();
            throw e;
        }
        this.comms = made;
    }

    static int[] devices(List<Rank> ranks) {
        int[] d = new int[ranks.size()];
        for (Rank r : ranks) {
            d[r.rank()] = r.device().ordinal();
        }
        return d;
    }

    /**
     * Runs {@code warmup + iterations} exchanges of {@code dispatch} then {@code combine} (which sends the received
     * rows back: from the receive buffer into the send buffer), timed with events on each rank's stream from the
     * exchange's launch to its end; per iteration the slowest rank's time.
     */
    MoeNcclBaseline.Timing time(AllToAllV dispatch, AllToAllV combine, int warmup, int iterations) {
        int n = ranks.size();
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

    /**
     * One exchange of {@code plan} with {@code data[r]} (rank r's packed send buffer) as input; returns each rank's
     * received bytes ({@code plan.recvTotal(r)} of them). For checks, not timing.
     */
    byte[][] exchange(AllToAllV plan, byte[][] data) {
        int n = ranks.size();
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
