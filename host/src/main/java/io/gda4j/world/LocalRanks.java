package io.gda4j.world;

import io.gda4j.cuda.CudaDevice;
import io.gda4j.cuda.ModuleImage;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;

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
    private boolean worldClosed;

    LocalRanks(List<Rank> ranks, WorldConfig config, ModuleTable modules) {
        this.ranks = Collections.unmodifiableList(new ArrayList<>(ranks));
        this.config = config;
        this.modules = modules;
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

    /**
     * Stops these ranks' kernels before anything is freed: freeing memory or unloading a module waits for kernels
     * running in the context, and a kernel still waiting for a peer would make that wait last until its timeout.
     * When a kernel still runs, every abort flag is raised (spinning device calls return within microseconds) and
     * this waits, at most the device wait timeout plus 5 s, for the kernels to return.
     *
     * @return the close failure when kernels still ran after the wait, else null
     */
    RuntimeException stopRunningKernels() {
        List<CudaDevice> devices = new ArrayList<>();
        for (Rank r : firstRankPerGpu().values()) {
            devices.add(r.device());
        }
        if (devices.stream().noneMatch(CudaDevice::kernelsMayBeRunning)) {
            return null;
        }
        abort();
        long deadline = System.nanoTime() + config.waitTimeout().toNanos() + CLOSE_DRAIN_EXTRA_NANOS;
        while (devices.stream().anyMatch(CudaDevice::kernelsMayBeRunning)) {
            if (System.nanoTime() - deadline > 0) {
                return new IllegalStateException("closing the world: kernels still ran on " + devices.stream()
                        .filter(CudaDevice::kernelsMayBeRunning).map(CudaDevice::toString)
                        .collect(Collectors.joining(", "))
                        + " after the abort flags were raised and close waited " + TimeUnit.NANOSECONDS.toMillis(
                        config.waitTimeout().toNanos() + CLOSE_DRAIN_EXTRA_NANOS) + " ms: a kernel that does not poll"
                        + " the abort flag keeps its memory in use");
            }
            LockSupport.parkNanos(DRAIN_POLL_NANOS);
        }
        return null;
    }

    /**
     * A world's close, done once (a second call returns at once): stops the kernels ({@link #stopRunningKernels}),
     * then {@code release} frees what the world holds beyond its ranks (given the failure so far, returning it or a
     * new first one), then the ranks close ({@link #close(RuntimeException)}), then {@code after} runs.
     *
     * @throws RuntimeException the first failure of any step, the later ones suppressed; every step runs regardless
     */
    synchronized void closeWorld(UnaryOperator<RuntimeException> release, Runnable after) {
        if (worldClosed) {
            return;
        }
        worldClosed = true;
        RuntimeException first = stopRunningKernels();
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
