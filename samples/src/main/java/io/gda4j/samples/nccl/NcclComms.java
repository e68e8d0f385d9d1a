package io.gda4j.samples.nccl;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * NCCL communicators of the ranks this process drives, indexed by world rank; destroyed on {@link #close()}. Two ways
 * to make them: {@link #initAll} for every rank of a world in one process ({@code ncclCommInitAll} over the ranks'
 * GPUs), {@link #initRank} for this process's one rank among several processes ({@code ncclGetUniqueId} on rank 0,
 * the id carried to every process by the caller's all-gather, then {@code ncclCommInitRank} in each).
 */
public final class NcclComms implements AutoCloseable {
    /** First byte of rank 0's all-gather entry: the unique id follows. */
    static final byte ID_FOLLOWS = 1;
    /** First byte of rank 0's all-gather entry: {@code ncclGetUniqueId} failed, its message (UTF-8) follows. */
    static final byte FAILURE_FOLLOWS = 0;

    /** By world rank; 0 where another process holds the rank's communicator. */
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
     * Communicators for ranks 0..n-1 on {@code devices}, all in this process.
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

    /**
     * This process's communicator, for {@code rank} of {@code worldSize} ranks that run one per process. Every process
     * of the world calls it at the same point: rank 0 makes the unique id, {@code allGather} (one entry per process,
     * rank 0's first, as a world's all-gather returns them) carries it to all, and each calls
     * {@code ncclCommInitRank}, which returns once every rank has. Call it on a thread where the rank's GPU is the
     * current CUDA device (its context current), and only where NCCL is available in every process (agree on that
     * first: a process that throws here leaves the others waiting in NCCL).
     *
     * @throws IllegalStateException when NCCL is missing here, or rank 0 could not make the id (its message)
     * @throws NcclException         when NCCL fails
     */
    public static NcclComms initRank(int worldSize, int rank, Function<byte[], byte[][]> allGather) {
        if (rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException("rank " + rank + " out of range 0.." + (worldSize - 1));
        }
        if (!LibNccl.isAvailable()) {
            throw new IllegalStateException(LibNccl.unavailableReason());
        }
        byte[] mine = rank == 0 ? uniqueIdEntry() : new byte[0];
        byte[] id = uniqueIdFrom(allGather.apply(mine));
        long[] comm = new long[1];
        NcclException.check(LibNccl.ncclCommInitRank(comm, worldSize, new LibNccl.UniqueId(id), rank),
                "ncclCommInitRank(rank " + rank + " of " + worldSize + ")");
        long[] comms = new long[worldSize];
        comms[rank] = comm[0];
        return new NcclComms(comms);
    }

    /** Rank 0's all-gather entry: {@link #ID_FOLLOWS} and the id, or {@link #FAILURE_FOLLOWS} and why not. */
    private static byte[] uniqueIdEntry() {
        byte[] id = new byte[LibNccl.UNIQUE_ID_BYTES];
        try {
            NcclException.check(LibNccl.ncclGetUniqueId(id), "ncclGetUniqueId");
            return idEntry(id);
        } catch (NcclException | LinkageError e) {
            return failureEntry(String.valueOf(e.getMessage()));
        }
    }

    static byte[] idEntry(byte[] id) {
        byte[] entry = new byte[1 + id.length];
        entry[0] = ID_FOLLOWS;
        System.arraycopy(id, 0, entry, 1, id.length);
        return entry;
    }

    static byte[] failureEntry(String why) {
        byte[] text = why.getBytes(StandardCharsets.UTF_8);
        byte[] entry = new byte[1 + text.length];
        entry[0] = FAILURE_FOLLOWS;
        System.arraycopy(text, 0, entry, 1, text.length);
        return entry;
    }

    /**
     * The unique id in an all-gather of {@link #initRank}: rank 0's entry (the first) carries it, every other entry is
     * empty.
     *
     * @throws IllegalStateException when rank 0 sent a failure or the gather is not of this protocol
     */
    static byte[] uniqueIdFrom(byte[][] gathered) {
        if (gathered.length == 0 || gathered[0].length == 0) {
            throw new IllegalStateException("rank 0's process sent no NCCL unique id: every process must call"
                    + " NcclComms.initRank at the same point");
        }
        for (int p = 1; p < gathered.length; p++) {
            if (gathered[p].length != 0) {
                throw new IllegalStateException("process " + p + " sent " + gathered[p].length + " bytes where only"
                        + " rank 0's process sends the NCCL unique id");
            }
        }
        byte[] entry = gathered[0];
        if (entry[0] == FAILURE_FOLLOWS) {
            throw new IllegalStateException("rank 0's process could not make an NCCL unique id: "
                    + new String(entry, 1, entry.length - 1, StandardCharsets.UTF_8));
        }
        if (entry[0] != ID_FOLLOWS || entry.length != 1 + LibNccl.UNIQUE_ID_BYTES) {
            throw new IllegalStateException("rank 0's process sent " + entry.length + " bytes, not an NCCL unique id"
                    + " (1 + " + LibNccl.UNIQUE_ID_BYTES + ")");
        }
        return Arrays.copyOfRange(entry, 1, entry.length);
    }

    /** NCCL's version code, e.g. 22105 for 2.21.5. */
    public static int version() {
        int[] v = new int[1];
        NcclException.check(LibNccl.ncclGetVersion(v), "ncclGetVersion");
        return v[0];
    }

    /** Ranks of the world these communicators belong to. */
    public int size() {
        return comms.length;
    }

    /** Whether this process holds {@code rank}'s communicator. */
    public boolean isLocal(int rank) {
        return comms[rank] != 0;
    }

    /** The {@code ncclComm_t} of {@code rank}, a rank of this process. */
    public long comm(int rank) {
        if (closed) {
            throw new IllegalStateException("these NCCL communicators are destroyed");
        }
        if (comms[rank] == 0) {
            throw new IllegalArgumentException("rank " + rank + "'s NCCL communicator belongs to another process");
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
            if (c == 0) {
                continue;
            }
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
