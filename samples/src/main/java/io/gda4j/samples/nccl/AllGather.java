package io.gda4j.samples.nccl;

import io.gda4j.cuda.CudaStream;

/** NCCL's all-gather of the ranks this process holds communicators of, as one group. */
public final class AllGather {
    private AllGather() {
    }

    /**
     * Queues {@code ncclAllGather} of {@code count} elements of {@code datatype} ({@link LibNccl#NCCL_INT32}, ...) for
     * every local rank of {@code comms}, each on its rank's stream: every rank's {@code sendBuffers[r]} in rank order
     * into every rank's {@code recvBuffers[r]}. Arrays are indexed by world rank; only the local ranks' entries are
     * read.
     */
    public static void launch(NcclComms comms, long[] sendBuffers, long[] recvBuffers, long count, int datatype,
                              CudaStream[] streams) {
        int n = comms.size();
        if (sendBuffers.length != n || recvBuffers.length != n || streams.length != n) {
            throw new IllegalArgumentException("an all-gather of " + n + " ranks needs " + n + " buffers and streams");
        }
        NcclException.inGroup(() -> {
            for (int r = 0; r < n; r++) {
                if (comms.isLocal(r)) {
                    NcclException.check(LibNccl.ncclAllGather(sendBuffers[r], recvBuffers[r], count, datatype,
                            comms.comm(r), streams[r].nativeHandle()), "ncclAllGather(rank " + r + ")");
                }
            }
        });
    }
}
