package io.gda4j.cuda;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * The streams of one GPU on which a kernel launched through {@link Kernel} may still be running: what
 * {@link CudaDevice#requireNoRunningKernels(String)} consults before a call that can wait for running work.
 *
 * <p>Each launch bumps its stream's launch count after {@code cuLaunchKernel} returns. A query removes a stream only
 * when {@code cuStreamQuery} says it is done and no launch happened since the count was read (a conditional remove),
 * so a launch racing with a query is never forgotten. Launches from other threads are fine; the cost per launch is
 * one map update next to a driver call of a few microseconds.
 */
final class LaunchTracker {
    /** Stream -> launches recorded on it since it was last seen idle. */
    private final Map<CudaStream, Long> launches = new ConcurrentHashMap<>();

    /** Records a kernel launch on {@code stream}; called after the launch was queued. */
    void launched(CudaStream stream) {
        launches.merge(stream, 1L, Long::sum);
    }

    /**
     * A stream on which a recorded kernel has not finished yet, or null when every recorded kernel is done. Closed
     * streams (their context may be gone) are forgotten: a stream is closed only once its work is no longer wanted.
     */
    CudaStream firstRunning() {
        for (Map.Entry<CudaStream, Long> entry : launches.entrySet()) {
            CudaStream stream = entry.getKey();
            Long seen = entry.getValue();
            boolean done;
            try {
                done = stream.isClosed() || stream.context().isClosed() || stream.isComplete();
            } catch (IllegalStateException closedMeanwhile) {
                done = true; // closed between the check and the query: its work is no longer wanted
            }
            if (done) {
                launches.remove(stream, seen);
            } else {
                return stream;
            }
        }
        return null;
    }

    /**
     * A stream whose recorded kernel is still running after up to {@code graceNanos} of queries, or null once every
     * recorded kernel is done: a kernel that ends on its own (the last of a benchmark's steps, a buffer's set-up, one
     * slowed by another process on the GPU) is waited out, one that spins until this thread acts is not.
     */
    CudaStream runningAfter(long graceNanos) {
        return stillThereAfter(this::firstRunning, graceNanos);
    }

    /**
     * Asks {@code query} until it answers null or {@code graceNanos} have passed (every 50 microseconds, never
     * blocking in the driver); returns its last answer.
     */
    static <T> T stillThereAfter(Supplier<T> query, long graceNanos) {
        T answer = query.get();
        long deadline = System.nanoTime() + graceNanos;
        while (answer != null && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(50_000);
            answer = query.get();
        }
        return answer;
    }
}
