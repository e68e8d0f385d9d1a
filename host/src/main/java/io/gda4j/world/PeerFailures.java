package io.gda4j.world;

import io.gda4j.bootstrap.PeerFailureListener;

import java.util.concurrent.atomic.AtomicReference;

/**
 * What a multi-process world does when the bootstrap finds a peer dead, or hears that a live peer stopped its kernels
 * (a device error there, or the host's abort): remember the first one, and stop this process's kernels at once by
 * raising the abort flags (a kernel waiting for that peer would otherwise spin until its timeout). Runs on the bootstrap's watcher thread, so it makes no CUDA call and never blocks: raising a flag is
 * one store into pinned host memory.
 */
final class PeerFailures implements PeerFailureListener {
    /** The first dead rank, why, and when it was found. */
    record Failure(int rank, String why, long detectedAtNanos) {
    }

    private final AtomicReference<Failure> first = new AtomicReference<>();
    private final AtomicReference<Failure> firstAbort = new AtomicReference<>();
    private final Runnable abort;
    /** Set before the abort words are freed; guarded by this object's lock, with the abort call. */
    private boolean stopped;

    /** @param abort raises the abort flags of every local rank; must not block */
    PeerFailures(Runnable abort) {
        this.abort = abort;
    }

    @Override
    public void onPeerFailure(int rank, String why) {
        first.compareAndSet(null, new Failure(rank, why, System.nanoTime()));
        raise();
    }

    @Override
    public void onPeerAbort(int rank, String why) {
        firstAbort.compareAndSet(null, new Failure(rank, why, System.nanoTime()));
        raise();
    }

    private synchronized void raise() {
        if (!stopped) {
            abort.run();
        }
    }

    /**
     * No abort flag is raised once this returns: the world calls it before it frees the flags, since the bootstrap
     * may still report a peer's death until it is closed itself. Failures are still remembered.
     */
    synchronized void stop() {
        stopped = true;
    }

    /** The first failure, or null while every peer is alive. */
    Failure first() {
        return first.get();
    }

    /** The first abort a live peer announced since the errors were last cleared, or null. */
    Failure firstAbort() {
        return firstAbort.get();
    }

    /** Forgets the announced aborts (the world's errors were cleared); deaths stay. */
    void clearAborts() {
        firstAbort.set(null);
    }
}
