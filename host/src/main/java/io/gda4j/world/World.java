package io.gda4j.world;

import io.gda4j.transport.TransportTag;

import java.util.List;

/**
 * N ranks, one GPU each, addressed by rank number. A process drives the ranks in {@link #localRanks()}: all of them
 * in a {@link LocalWorld} (one JVM, several GPUs), one of them in a multi-process world. Code written against this
 * interface runs unchanged in both.
 */
public interface World extends AutoCloseable {
    /** Number of ranks in the world. */
    int size();

    /** The ranks this process drives, in rank order. */
    List<Rank> localRanks();

    /** A rank this process drives; throws IllegalArgumentException for a rank out of range or not local. */
    Rank rank(int rank);

    /** The allocation plan shared by every rank's heap. */
    SymmetricHeap heap();

    WorldConfig config();

    /** The transport rank {@code from} uses to reach rank {@code to}. */
    TransportTag transport(int from, int to);

    /** Throws the first device error recorded on any local rank (a {@link DeviceWaitTimeoutException} for timeouts). */
    void checkErrors();

    /** Clears every local rank's error record and abort flag, so the world can run again after a handled failure. */
    void clearErrors();

    /** Raises the abort flag of every local rank: spinning device calls return ERR_ABORTED. */
    void abort();

    @Override
    void close();
}
