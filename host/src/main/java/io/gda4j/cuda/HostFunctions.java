package io.gda4j.cuda;

import com.sun.jna.CallbackThreadInitializer;
import com.sun.jna.Native;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Java work queued on CUDA streams ({@code cuLaunchHostFunc}, bound through JNA by {@link LibCuda}): a driver thread
 * runs it once the work queued on the stream before it is done, and the stream's later work waits until it returns.
 * Queued during a graph capture it becomes a host node, run again on every replay, so this owner keeps it until
 * {@link #close()}; queued eagerly it is forgotten once it ran. The work must not call CUDA (the driver forbids it on
 * that thread), should return within microseconds (the stream waits), and is run by one driver thread for every
 * stream of the process, so it must not wait for other host functions. A throwable it throws is kept
 * ({@link #failure()}), never thrown into the driver.
 *
 * <p>Thread-safe. The driver's thread stays attached to the JVM between calls (JNA would otherwise attach and
 * detach it on every call).
 */
public final class HostFunctions implements AutoCloseable {
    private static final AtomicLong IDS = new AtomicLong();
    /** Every owner's queued work by id: the id is the host function's user data. */
    private static final Map<Long, Queued> QUEUED = new ConcurrentHashMap<>();
    /** One callback for the process, held for its life: the driver may call it as long as a graph holds its node. */
    private static final LibCuda.HostFn CALLBACK = HostFunctions::run;

    static {
        Native.setCallbackThreadInitializer(CALLBACK,
                new CallbackThreadInitializer(true, false, "gda4j CUDA host functions"));
    }

    /** Work queued by {@code owner}; {@code captured}: a graph node, run on every replay until the owner closes. */
    private record Queued(HostFunctions owner, Runnable work, boolean captured) {
    }

    private final String owner;
    private final Set<Long> captured = ConcurrentHashMap.newKeySet();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private volatile boolean closed;

    /** {@code owner}: whose work this is, for messages ("rank 1 MoE calls"). */
    public HostFunctions(String owner) {
        this.owner = owner;
    }

    /**
     * Queues {@code work} on {@code stream} (see the class comment for what it may do).
     *
     * @throws IllegalStateException once closed, or where libcuda cannot be bound through JNA
     * @throws CudaException         when the driver refuses the call
     */
    public void launch(CudaStream stream, Runnable work) {
        if (closed) {
            throw new IllegalStateException("the host functions of " + owner + " are closed");
        }
        String unavailable = LibCuda.unavailableReason();
        if (unavailable != null) {
            throw new IllegalStateException("cuLaunchHostFunc cannot be bound through JNA: " + unavailable);
        }
        boolean capturing = stream.isCapturing(); // binds the stream's context too
        queue(stream.nativeHandle(), capturing, work, stream.toString());
    }

    /**
     * Queues {@code work} on the native stream {@code nativeStream}, kept for replays when {@code capturing}; the
     * driver call of {@link #launch}, apart from the stream object (a test's fake driver has none).
     */
    void queue(long nativeStream, boolean capturing, Runnable work, String streamName) {
        long id = IDS.incrementAndGet();
        QUEUED.put(id, new Queued(this, work, capturing));
        if (capturing) {
            captured.add(id);
        }
        int result = LibCuda.cuLaunchHostFunc(nativeStream, CALLBACK, id);
        if (result != Driver.SUCCESS) {
            QUEUED.remove(id);
            captured.remove(id);
            Cuda.check(result, "cuLaunchHostFunc(" + streamName + ", for " + owner + ")");
        }
    }

    /** On the driver's thread. An id no longer queued (its owner closed; a graph replayed after that) runs nothing. */
    private static void run(long id) {
        Queued q = QUEUED.get(id);
        if (q == null) {
            return;
        }
        if (!q.captured()) {
            QUEUED.remove(id);
        }
        try {
            q.work().run();
        } catch (Throwable t) {
            q.owner().failure.compareAndSet(null, t);
        }
    }

    /** The first throwable a host function of this owner threw, or null. */
    public Throwable failure() {
        return failure.get();
    }

    /** Host functions captured into graphs and kept for their replays (for tests). */
    public int capturedCount() {
        return captured.size();
    }

    /**
     * Refuses later launches and forgets the captured work: a graph replayed afterwards runs nothing at those nodes.
     * Close only once the streams have finished what was queued (the eager work then ran and was forgotten).
     */
    @Override
    public void close() {
        closed = true;
        for (Long id : captured) {
            QUEUED.remove(id);
        }
        captured.clear();
    }
}
