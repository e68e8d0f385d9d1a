package io.gda4j.world;

import io.gda4j.cuda.ModuleImage;
import io.gda4j.transport.Transport;

import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

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

    /** Rank {@code rank} when this process drives it; empty when another process does (or it is out of range). */
    default Optional<Rank> localRank(int rank) {
        for (Rank r : localRanks()) {
            if (r.rank() == rank) {
                return Optional.of(r);
            }
        }
        return Optional.empty();
    }

    /** A rank this process drives; throws IllegalArgumentException for a rank out of range or not local. */
    Rank rank(int rank);

    /**
     * How many ranks of this world run on the GPU of {@code rank}, a rank this process drives, itself included: the
     * ranks whose kernels compete for that GPU's SMs. A kernel that spins until peers signal must leave room for
     * theirs. Here: the local ranks on the same device; a multi-process world also counts other processes' ranks.
     */
    default int ranksOnGpuOf(int rank) {
        int ordinal = rank(rank).device().ordinal();
        int n = 0;
        for (Rank r : localRanks()) {
            if (r.device().ordinal() == ordinal) {
                n++;
            }
        }
        return n;
    }

    /** The allocation plan shared by every rank's heap. */
    SymmetricHeap heap();

    WorldConfig config();

    /** The transport rank {@code from} uses to reach rank {@code to}. */
    Transport transport(int from, int to);

    /**
     * Whether the transport of some pair of this world's ranks passes {@code test} (ask a {@code Capability}: "some
     * pair is not DIRECT", "some pair prefers few puts"), the same answer in every process: each process asks its own
     * ranks' pairs, and the answers are gathered, so every process of the world must call it.
     *
     * @throws io.gda4j.bootstrap.BootstrapException when a process died or did not arrive in time (naming it)
     */
    default boolean anyPair(Predicate<Transport> test) {
        boolean mine = false;
        for (Rank r : localRanks()) {
            for (int peer = 0; peer < size(); peer++) {
                mine |= test.test(transport(r.rank(), peer));
            }
        }
        for (byte[] theirs : allGather(new byte[] {(byte) (mine ? 1 : 0)})) {
            if (theirs[0] != 0) {
                return true;
            }
        }
        return false;
    }

    /** Throws the first device error recorded on any local rank (a {@link DeviceWaitTimeoutException} for timeouts). */
    void checkErrors();

    /** Clears every local rank's error record and abort flag, so the world can run again after a handled failure. */
    void clearErrors();

    /** Raises the abort flag of every local rank: spinning device calls return ERR_ABORTED. */
    void abort();

    /**
     * A host barrier: returns when every process of the world has called it. Between two GPU steps that reset heap
     * words a peer writes, it keeps one process's reset from landing after the peer's next write. A world in one
     * process returns at once.
     *
     * @throws io.gda4j.bootstrap.BootstrapException when a process died or did not arrive in time (naming it)
     */
    void barrier();

    /**
     * Every process's {@code mine}, one entry per process in the order of the ranks they drive, over the same
     * connections as {@link #barrier()}: small arrays (timings, a hash), for results a process computed for its own
     * ranks. A world in one process returns its own array alone.
     *
     * @throws io.gda4j.bootstrap.BootstrapException when a process died or did not arrive in time (naming it)
     */
    byte[][] allGather(byte[] mine);

    /**
     * Loads the toolkit modules {@code names} ({@code io/gda4j/ptx/<name>.ptx}) on every GPU of the local ranks, with
     * all their kernels, unless already loaded. Call it before launching kernels that wait for each other: loading a
     * module waits for kernels running on that GPU, so it is refused once one may run (see the package docs).
     *
     * @throws io.gda4j.cuda.ContextBusyException when a GPU that still lacks a module runs a kernel
     */
    default void loadModules(String... names) {
        for (String name : names) {
            loadModules(ModuleImage.resource(name));
        }
    }

    /** Loads your own modules on every GPU of the local ranks, as {@link #loadModules(String...)}. */
    void loadModules(ModuleImage... images);

    @Override
    void close();
}
