package io.gda4j.nic.emulated;

import io.gda4j.cuda.CudaContext;
import io.gda4j.cuda.CudaEvent;
import io.gda4j.cuda.CudaStream;
import io.gda4j.cuda.Driver;

import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The order of split atomics (strict atomics: a read, a pause, a write) of every emulated NIC of this process. Each QP
 * executes on its own CUDA stream and streams run concurrently, but a responder NIC's atomics are atomic with each
 * other, and here the requester's engine executes them (with one NIC per GPU, several engines act on one GPU's
 * memory): so each split atomic's stream first waits for the previous one in the process ({@code cuStreamWaitEvent},
 * across contexts and GPUs alike), and then marks itself as the previous one with its context's event. The chain adds
 * an order between QPs that a NIC does not promise, only between atomics. One chain (its events, one per context) per
 * platform; the previous atomic is shared by all, under {@link #ORDER}, which a caller holds from
 * {@link #waitForPrevious} to {@link #markLast}.
 */
final class AtomicChain implements AutoCloseable {
    /** Held by an engine from its wait for the previous split atomic to marking its own. */
    static final Object ORDER = new Object();
    /** The event recorded after the process's latest split atomic (guarded by {@link #ORDER}). */
    private static CudaEvent last;

    private final Map<CudaContext, CudaEvent> events = new IdentityHashMap<>();

    /** The event of {@code context} that marks its executors' atomics (made once; timing off, it is only waited on). */
    synchronized CudaEvent eventOf(CudaContext context) {
        CudaEvent e = events.get(context);
        if (e == null) {
            e = context.createOrderingEvent();
            events.put(context, e);
        }
        return e;
    }

    /**
     * Queues on {@code stream} a wait for the previous split atomic (a wait captures the event as it is now); hold
     * {@link #ORDER}.
     */
    void waitForPrevious(CudaStream stream, long target) {
        if (last != null) {
            CudaQpExecutor.check(Driver.waitEvent(stream, last), "cuStreamWaitEvent", target);
        }
    }

    /** Records {@code event} (its stream's context's) after the atomic just queued on {@code stream}. */
    void markLast(CudaEvent event, CudaStream stream, long target) {
        CudaQpExecutor.check(Driver.record(event, stream), "cuEventRecord", target);
        last = event;
    }

    @Override
    public synchronized void close() {
        synchronized (ORDER) {
            if (events.containsValue(last)) {
                last = null; // destroyed below; the next atomic need not wait for it (its platform is quiet)
            }
        }
        RuntimeException first = null;
        for (Map.Entry<CudaContext, CudaEvent> e : events.entrySet()) {
            if (e.getKey().isClosed()) {
                continue;
            }
            try {
                e.getValue().close(); // CUDA_ERROR_DEINITIALIZED (the driver shut down) is no failure
            } catch (RuntimeException failed) {
                if (first == null) {
                    first = new IllegalStateException("cuEventDestroy (emulated NIC atomics) failed: "
                            + failed.getMessage(), failed);
                }
            }
        }
        events.clear();
        if (first != null) {
            throw first;
        }
    }
}
