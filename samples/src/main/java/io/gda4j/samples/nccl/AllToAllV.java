package io.gda4j.samples.nccl;

import io.gda4j.cuda.CudaStream;

/**
 * An all-to-all-v in bytes: what each rank sends to and receives from each rank, where in its send and receive
 * buffers ({@code sendOffsets[r][p]}: the first byte for peer p in rank r's send buffer, peers in rank order, packed;
 * the receive side alike, by source). Built from a matrix of rows, so both sides agree by construction:
 * {@code recvBytes[p][r] == sendBytes[r][p]}.
 */
public record AllToAllV(long[][] sendBytes, long[][] sendOffsets, long[][] recvBytes, long[][] recvOffsets) {

    /** {@code rows[src][dst]} rows of {@code rowBytes} each. */
    public static AllToAllV ofRows(long[][] rows, long rowBytes) {
        int n = rows.length;
        long[][] send = new long[n][n];
        long[][] recv = new long[n][n];
        for (int s = 0; s < n; s++) {
            if (rows[s].length != n) {
                throw new IllegalArgumentException("rows must be square: row " + s + " has " + rows[s].length + " of " + n);
            }
            for (int d = 0; d < n; d++) {
                if (rows[s][d] < 0) {
                    throw new IllegalArgumentException("rows[" + s + "][" + d + "] = " + rows[s][d] + " is negative");
                }
                send[s][d] = Math.multiplyExact(rows[s][d], rowBytes);
                recv[d][s] = send[s][d];
            }
        }
        return new AllToAllV(send, prefix(send), recv, prefix(recv));
    }

    /** The reverse exchange (what combine sends back): rows[src][dst] becomes rows[dst][src]. */
    public static long[][] transpose(long[][] rows) {
        int n = rows.length;
        long[][] t = new long[n][n];
        for (int s = 0; s < n; s++) {
            for (int d = 0; d < n; d++) {
                t[d][s] = rows[s][d];
            }
        }
        return t;
    }

    private static long[][] prefix(long[][] bytes) {
        long[][] off = new long[bytes.length][];
        for (int r = 0; r < bytes.length; r++) {
            off[r] = new long[bytes[r].length];
            long at = 0;
            for (int p = 0; p < bytes[r].length; p++) {
                off[r][p] = at;
                at = Math.addExact(at, bytes[r][p]);
            }
        }
        return off;
    }

    public int size() {
        return sendBytes.length;
    }

    /** Bytes rank {@code r}'s send buffer must hold. */
    public long sendTotal(int r) {
        long t = 0;
        for (long b : sendBytes[r]) {
            t += b;
        }
        return t;
    }

    /** Bytes rank {@code r} receives (its own included). */
    public long recvTotal(int r) {
        long t = 0;
        for (long b : recvBytes[r]) {
            t += b;
        }
        return t;
    }

    /**
     * Bytes rank {@code r} sends to ranks outside its group: {@code group[p]} labels rank p (its GPU, say), so rank
     * r's own bytes and those to ranks of its group are left out.
     */
    public long sendTotalOutside(int r, int[] group) {
        if (group.length != size()) {
            throw new IllegalArgumentException("an all-to-all-v of " + size() + " ranks needs " + size()
                    + " labels, got " + group.length);
        }
        long t = 0;
        for (int p = 0; p < size(); p++) {
            if (group[p] != group[r]) {
                t += sendBytes[r][p];
            }
        }
        return t;
    }

    /**
     * Queues the exchange: one NCCL group of the sends and receives of every rank this process holds a communicator
     * of (ncclUint8, so counts are bytes), each on its rank's stream. Arrays are indexed by world rank; only the
     * entries of those ranks are read. {@code sendBuffers[r]} and {@code recvBuffers[r]} are device addresses on rank
     * r's GPU.
     */
    public void launch(NcclComms comms, long[] sendBuffers, long[] recvBuffers, CudaStream[] streams) {
        int n = size();
        if (comms.size() != n || sendBuffers.length != n || recvBuffers.length != n || streams.length != n) {
            throw new IllegalArgumentException("an all-to-all-v of " + n + " ranks needs " + n + " communicators, buffers"
                    + " and streams");
        }
        long[] handles = new long[n];
        for (int r = 0; r < n; r++) {
            if (comms.isLocal(r)) {
                handles[r] = streams[r].nativeHandle();
            }
        }
        NcclException.inGroup(() -> {
            for (int r = 0; r < n; r++) {
                if (!comms.isLocal(r)) {
                    continue;
                }
                for (int p = 0; p < n; p++) {
                    if (sendBytes[r][p] > 0) {
                        NcclException.check(LibNccl.ncclSend(sendBuffers[r] + sendOffsets[r][p], sendBytes[r][p],
                                LibNccl.NCCL_UINT8, p, comms.comm(r), handles[r]), "ncclSend(rank " + r + " -> " + p + ")");
                    }
                    if (recvBytes[r][p] > 0) {
                        NcclException.check(LibNccl.ncclRecv(recvBuffers[r] + recvOffsets[r][p], recvBytes[r][p],
                                LibNccl.NCCL_UINT8, p, comms.comm(r), handles[r]), "ncclRecv(rank " + r + " <- " + p + ")");
                    }
                }
            }
        });
    }
}
