package io.gda4j.nccl;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * One NCCL communicator per rank of a single process, made with {@code ncclCommInitAll} over the ranks' GPUs (rank i
 * on {@code devices[i]}); destroyed on {@link #close()}.
 */
public final class NcclComms implements AutoCloseable {
    private final long[] comms;
    private boolean closed;

    private NcclComms(long[] comms) {
        this.comms = comms;
    }

    /**
     * Why communicators over {@code devices} cannot be made here, or null when they can: two ranks on one GPU (NCCL
     * refuses a device twice in one clique), or NCCL missing.
     */
    public static String unavailableReason(int[] devices) {
        Map<Integer, Integer> first = new HashMap<>();
        for (int r = 0; r < devices.length; r++) {
            Integer other = first.putIfAbsent(devices[r], r);
            if (other != null) {
                return "NCCL needs one GPU per rank: ranks " + other + " and " + r + " share GPU " + devices[r];
            }
        }
        return LibNccl.isAvailable() ? null : LibNccl.unavailableReason();
    }

    /**
     * Communicators for ranks 0..n-1 on {@code devices}.
     *
     * @throws IllegalStateException when {@link #unavailableReason(int[])} says why not
     * @throws NcclException         when NCCL fails
     */
    public static NcclComms initAll(int[] devices) {
        String why = unavailableReason(devices);
        if (why != null) {
            throw new IllegalStateException(why);
        }
        long[] comms = new long[devices.length];
        NcclException.check(LibNccl.ncclCommInitAll(comms, devices.length, devices.clone()),
                "ncclCommInitAll(" + Arrays.toString(devices) + ")");
        return new NcclComms(comms);
    }

    /** NCCL's version code, e.g. 22105 for 2.21.5. */
    public static int version() {
        int[] v = new int[1];
        NcclException.check(LibNccl.ncclGetVersion(v), "ncclGetVersion");
        return v[0];
    }

    public int size() {
        return comms.length;
    }

    /** The {@code ncclComm_t} of {@code rank}. */
    public long comm(int rank) {
        if (closed) {
            throw new IllegalStateException("these NCCL communicators are destroyed");
        }
        return comms[rank];
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        NcclException failure = null;
        for (long c : comms) {
            int result = LibNccl.ncclCommDestroy(c);
            if (result != LibNccl.NCCL_SUCCESS && failure == null) {
                failure = new NcclException(result, "ncclCommDestroy");
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
