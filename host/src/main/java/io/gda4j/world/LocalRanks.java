package io.gda4j.world;

import io.gda4j.cuda.ModuleImage;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * The ranks one process drives and what every kind of world does with them alike: read their error records, raise
 * and lower their abort flags, load modules once per GPU, and stop their kernels before anything is freed.
 */
final class LocalRanks {
    /** How long a drain waits, beyond the device wait timeout, for aborted kernels to return before freeing. */
    private static final long CLOSE_DRAIN_EXTRA_NANOS = TimeUnit.SECONDS.toNanos(5);
    /** Aborted kernels return within microseconds; polling every 100 us costs nothing and adds little to close. */
    private static final long DRAIN_POLL_NANOS = TimeUnit.MICROSECONDS.toNanos(100);

    private final List<Rank> ranks;
    private final WorldConfig config;
    private final ModuleTable modules;
    /** The GPUs with kernels that may still run: {@link #gpusWithKernels()}, or a test's stand-in. */
    private final Supplier<List<String>> busyGpus;
    private final long drainExtraNanos;
    private boolean worldClosed;

    LocalRanks(List<Rank> ranks, WorldConfig config, ModuleTable modules) {
        this(ranks, config, modules, null, CLOSE_DRAIN_EXTRA_NANOS);
    }

    /** With a stand-in for the GPUs' state ({@code busyGpus}; null: the ranks' own) and a drain's extra time. */
    LocalRanks(List<Rank> ranks, WorldConfig config, ModuleTable modules, Supplier<List<String>> busyGpus,
               long drainExtraNanos) {
        this.ranks = Collections.unmodifiableList(new ArrayList<>(ranks));
        this.config = config;
        this.modules = modules;
        this.busyGpus = busyGpus != null ? busyGpus : this::gpusWithKernels;
        this.drainExtraNanos = drainExtraNanos;
    }

    List<Rank> list() {
        return ranks;
    }

    /**
     * Throws IllegalArgumentException unless {@code rank} numbers a rank of a world of {@code worldSize}, local or
     * not: every kind of world refuses a rank number alike, before it asks whether this process drives it.
     */
    static void checkInWorld(int rank, int worldSize) {
        if (rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException("rank " + rank + " out of range: the world has ranks 0.." + (worldSize - 1));
        }
    }

    /**
     * Throws the first device error recorded on these ranks (a {@link DeviceWaitTimeoutException} for timeouts), else
     * a {@link DeviceErrorException} when an abort flag is raised.
     */
    void checkErrors() {
        for (Rank r : ranks) {
            throwIfError(r.readErrorRecord());
        }
        throwIfAborted();
    }

    /** Throws {@code rec} as the exception {@link #checkErrors()} gives for it, when it holds an error. */
    void throwIfError(ErrorRecord rec) {
        if (rec.isError()) {
            String msg = rec.describe(config.waitTimeout()) + transportProblems();
            throw rec.isTimeout()
                    ? new DeviceWaitTimeoutException(msg, rec)
                    : new DeviceErrorException(msg, rec);
        }
    }

    /** Throws when a rank's abort flag is raised (its kernels stopped without a record of their own). */
    void throwIfAborted() {
        for (Rank r : ranks) {
            if (r.abortRaised()) {
                throw new DeviceErrorException("rank " + r.rank()
                        + " stopped because its abort flag was raised (by the host, by a failing transport or by a rank"
                        + " whose record was cleared)" + transportProblems(), null);
            }
        }
    }

    /**
     * What the links report about themselves (a dead proxy thread, a QP in error), as a sentence to append to a
     * device error: the device only knows that a wait ran out, the host knows who should have answered.
     */
    private String transportProblems() {
        List<String> problems = new ArrayList<>();
        for (Rank r : ranks) {
            for (String p : r.linkProblems()) {
                if (!problems.contains(p)) {
                    problems.add(p);
                }
            }
        }
        return problems.isEmpty() ? "" : " Transport problems: " + String.join("; ", problems) + ".";
    }

    void clearErrors() {
        for (Rank r : ranks) {
            r.clearErrors();
        }
    }

    void abort() {
        for (Rank r : ranks) {
            r.raiseAbort();
        }
    }

    void loadModules(ModuleImage... images) {
        for (ModuleImage image : images) {
            for (Rank r : firstRankPerGpu().values()) {
                modules.module(r.context(), image);
            }
        }
    }

    /** The first rank on each GPU, in GPU order of appearance: whose context loads that GPU's modules. */
    private Map<Integer, Rank> firstRankPerGpu() {
        Map<Integer, Rank> first = new LinkedHashMap<>();
        for (Rank r : ranks) {
            first.putIfAbsent(r.device().ordinal(), r);
        }
        return first;
    }

    /** The GPUs of these ranks on which a kernel launched through gda4j may still run, by name. */
    private List<String> gpusWithKernels() {
        List<String> busy = new ArrayList<>();
        for (Rank r : firstRankPerGpu().values()) {
            if (r.device().kernelsMayBeRunning()) {
                busy.add(r.device().toString());
            }
        }
        return busy;
    }

    /**
     * Stops these ranks' kernels before anything is freed: freeing memory or unloading a module waits for kernels
     * running in the context, and a kernel still waiting for a peer would make that wait last until its timeout.
     * When a kernel still runs, every abort flag is raised (spinning device calls return within microseconds) and
     * this waits, at most the device wait timeout plus 5 s, for the kernels to return.
     *
     * @return the failure when kernels still ran after the wait, else null
     */
    KernelsStillRunningException stopRunningKernels() {
        return drain(busyGpus, this::abort, config.waitTimeout().toNanos() + drainExtraNanos);
    }

    /**
     * {@link #stopRunningKernels}' loop: nothing to do where {@code busy} names no GPU, else {@code abort} once, then
     * polls {@code busy} until it names none, for at most {@code waitNanos}.
     */
    static KernelsStillRunningException drain(Supplier<List<String>> busy, Runnable abort, long waitNanos) {
        if (busy.get().isEmpty()) {
            return null;
        }
        abort.run();
        long deadline = System.nanoTime() + waitNanos;
        List<String> still;
        while (!(still = busy.get()).isEmpty()) {
            if (System.nanoTime() - deadline > 0) {
                return new KernelsStillRunningException(still, TimeUnit.NANOSECONDS.toMillis(waitNanos));
            }
            LockSupport.parkNanos(DRAIN_POLL_NANOS);
        }
        return null;
    }

    /**
     * A world's close, done once (a second call returns at once): stops the kernels ({@link #stopRunningKernels}),
     * then {@code release} frees what the world holds beyond its ranks (given the failure so far, returning it or a
     * new first one), then the ranks close ({@link #close(RuntimeException)}), then {@code after} runs. Where kernels
     * still run after the drain, neither {@code release} nor the ranks' close runs (each would wait for those kernels,
     * forever if they never return): only {@code after} does, and the {@link KernelsStillRunningException} is thrown.
     *
     * @throws RuntimeException the first failure of any step, the later ones suppressed; every step runs regardless
     *                          of the failures before it, the stuck kernels' case above aside
     */
    synchronized void closeWorld(UnaryOperator<RuntimeException> release, Runnable after) {
        if (worldClosed) {
            return;
        }
        worldClosed = true;
        KernelsStillRunningException stuck = stopRunningKernels();
        if (stuck != null) {
            // Freeing the world's memory or unloading its modules would wait for that kernel, forever if it never
            // returns: the GPU side stays as it is (the process gets it back when it ends), the host side closes.
            RuntimeException first = collect(stuck, after);
            throw first;
        }
        RuntimeException first = null;
        try {
            first = release.apply(first);
        } catch (RuntimeException e) {
            // A release that throws instead of returning its failure must not leave the ranks open.
            first = add(first, e);
        }
        first = collect(close(first), after);
        if (first != null) {
            throw first;
        }
    }

    /**
     * Closes every rank's links, unloads the modules, then closes the ranks newest first; failures are added to
     * {@code first} (or become it). Every link goes before any heap or module: draining a proxy link copies into
     * the peer's heap and may launch the proxy module's atomic-add kernel.
     *
     * @return the first failure, with the later ones suppressed, or null
     */
    RuntimeException close(RuntimeException first) {
        for (int i = ranks.size() - 1; i >= 0; i--) {
            first = ranks.get(i).closeLinks(first);
        }
        first = collect(first, modules::close);
        for (int i = ranks.size() - 1; i >= 0; i--) {
            first = collect(first, ranks.get(i)::close);
        }
        return first;
    }

    static RuntimeException collect(RuntimeException first, Runnable step) {
        try {
            step.run();
        } catch (RuntimeException e) {
            return add(first, e);
        }
        return first;
    }

    /** {@code e} as the first failure, or suppressed by {@code first} where there is one already. */
    private static RuntimeException add(RuntimeException first, RuntimeException e) {
        if (first == null) {
            return e;
        }
        if (first != e) {
            first.addSuppressed(e);
        }
        return first;
    }
}
