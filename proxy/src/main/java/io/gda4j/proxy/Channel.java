package io.gda4j.proxy;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One trigger FIFO and the handler that executes its triggers: the unit a proxy thread owns. The CUDA-backed
 * {@link ProxyChannel} builds one per link; tests build them over plain buffers.
 *
 * <p>A channel is polled by exactly one thread at a time: its proxy thread while it is registered with a
 * {@link ProxyService}, then the closing thread for the final drain. A handler failure stops only this channel (its
 * state word says FAILED, so the GPU's slow paths fail at once) and leaves the thread serving the others.
 */
public final class Channel {
    /** Heartbeat age after which a running proxy thread is reported as blocked. */
    static final Duration BLOCKED_AFTER = Duration.ofSeconds(1);

    private final String name;
    private final TriggerFifo fifo;
    private final TriggerHandler handler;
    private final int batch;
    private final Runnable onFailure;
    private volatile ProxyThread owner;
    private volatile String problem;
    private volatile boolean faulted;
    /** fault() has begun (the owning thread's guard against a second fault while the first raises the flags). */
    private boolean faulting;
    private volatile boolean detached;
    /** Triggers handled and nanoseconds spent handling them; one writer (the polling thread), read as snapshots. */
    private final AtomicLong triggersHandled = new AtomicLong();
    private final AtomicLong handlerNanos = new AtomicLong();

    /**
     * @param name      what messages call it, e.g. "rank 0 -> rank 1"
     * @param batch     most triggers handled per poll, so one busy channel cannot starve the others of its thread
     * @param onFailure run once when the channel fails (e.g. raise the ranks' abort flags); may be null
     */
    public Channel(String name, TriggerFifo fifo, TriggerHandler handler, int batch, Runnable onFailure) {
        if (batch < 1) {
            throw new IllegalArgumentException("batch must be at least 1, got " + batch);
        }
        this.name = Objects.requireNonNull(name, "name");
        this.fifo = Objects.requireNonNull(fifo, "fifo");
        this.handler = Objects.requireNonNull(handler, "handler");
        this.batch = batch;
        this.onFailure = onFailure;
    }

    public String name() {
        return name;
    }

    public TriggerFifo fifo() {
        return fifo;
    }

    /** The proxy thread serving the channel, or null while unassigned. */
    public ProxyThread owner() {
        return owner;
    }

    void assign(ProxyThread runner) {
        owner = runner;
    }

    /** Triggers handled so far and the time spent handling them (by the proxy thread's clock). */
    public ProxyActivity activity() {
        return new ProxyActivity(triggersHandled.getAcquire(), handlerNanos.getAcquire());
    }

    /** Whether the channel stopped on an error of its own (a bad trigger, a CUDA error) or its thread's death. */
    public boolean isFaulted() {
        return faulted;
    }

    /**
     * Handles what is published, up to the batch. Called by the owning thread only; never throws (a handler failure
     * faults the channel).
     */
    int poll() {
        if (faulted) {
            return 0;
        }
        try {
            // Progress after the batch: a handler that queues work (the verbs handler) publishes it once per batch.
            // The clock is read only when a trigger waits, so an idle cycle costs what it did.
            int handled = 0;
            if (fifo.hasPublished()) {
                long start = System.nanoTime();
                handled = fifo.poll(handler, batch);
                handlerNanos.setRelease(handlerNanos.getPlain() + System.nanoTime() - start);
                triggersHandled.setRelease(triggersHandled.getPlain() + handled);
            }
            return handled + handler.progress();
        } catch (RuntimeException e) {
            fault("stopped at trigger position " + fifo.tail() + ": " + e.getMessage(), e);
            return 0;
        }
    }

    /** Stops the channel for good: FAILED state for the GPU, a problem for the host, the failure callback. */
    void fault(String why, Throwable cause) {
        if (faulting) {
            return;
        }
        faulting = true;
        problem = "proxy channel " + name + " " + why + (cause != null && cause.getMessage() == null
                ? " (" + cause.getClass().getName() + ")" : "");
        fifo.putStateRelease(TriggerFifoDescriptor.STATE_FAILED);
        if (onFailure != null) {
            try {
                onFailure.run();
            } catch (RuntimeException e) {
                problem = problem + "; raising the abort flag failed too: " + e.getMessage();
            }
        }
        // Published last: whoever sees isFaulted() also sees the abort flags raised and the whole problem.
        faulted = true;
    }

    /** The owning thread died: the channel can never run again. */
    void ownerDied(ProxyThread runner, Throwable cause) {
        fault("lost its proxy thread " + runner.name() + ", which died at " + runner.failedAt() + ": " + cause
                + "; triggers pushed to this channel are no longer executed: close the world and build a new one", cause);
    }

    /**
     * The final drain, by the closing thread once no proxy thread polls the channel: handles what is published,
     * waits up to {@code timeout} for the handler's work to complete, then tells the GPU the proxy has stopped.
     * Returns what could not be completed, or empty.
     */
    Optional<String> drain(Duration timeout, String why) {
        if (detached) {
            return Optional.empty(); // drained before (the service closed, then the link): nothing runs after a stop
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        String trouble = null;
        if (!faulted) {
            try {
                while (fifo.poll(handler, Integer.MAX_VALUE) + handler.progress() > 0
                        && System.nanoTime() - deadline < 0) {
                    // keep handling: kernels may still be pushing while the channel closes
                }
            } catch (RuntimeException e) {
                fault("stopped while closing, at trigger position " + fifo.tail() + ": " + e.getMessage(), e);
            }
        }
        long left = Math.max(0, deadline - System.nanoTime());
        if (!handler.awaitCompletion(left)) {
            trouble = String.format(Locale.ROOT, "proxy channel %s: work was still running %d ms after it was closed (%s)",
                    name, timeout.toMillis(), handler.inFlight());
        } else if (fifo.hasPublished()) {
            trouble = "proxy channel " + name + ": a trigger at position " + fifo.tail()
                    + (faulted ? " was left unexecuted because the channel had failed" : " was published half-written"
                    + " when it closed and was not executed");
        }
        if (faulted && trouble == null) {
            trouble = problem;
        }
        detached = true;
        problem = faulted ? problem : "proxy channel " + name + " is closed (" + why + "): triggers pushed to it are"
                + " not executed";
        fifo.putStateRelease(faulted ? TriggerFifoDescriptor.STATE_FAILED : TriggerFifoDescriptor.STATE_STOPPED);
        return Optional.ofNullable(trouble);
    }

    /** What is wrong with the channel or its thread, in a sentence; empty while it runs normally. */
    public Optional<String> problem() {
        String p = problem;
        if (p != null) {
            return Optional.of(p);
        }
        ProxyThread r = owner;
        if (r == null || detached) {
            return Optional.empty();
        }
        switch (r.state()) {
            case FAILED:
                return Optional.of("proxy thread " + r.name() + " serving " + name + " died at " + r.failedAt() + ": "
                        + r.failure());
            case CLOSED:
                return Optional.of("proxy thread " + r.name() + " serving " + name + " was stopped: triggers pushed to "
                        + "it are not executed");
            case RUNNING:
                Duration silent = r.sinceHeartbeat();
                if (silent.compareTo(BLOCKED_AFTER) > 0) {
                    return Optional.of("proxy thread " + r.name() + " serving " + name + " has not finished a polling "
                            + "cycle for " + silent.toMillis() + " ms (blocked in a CUDA call, or starved of CPU?)");
                }
                return Optional.empty();
            default:
                return Optional.empty();
        }
    }

    @Override
    public String toString() {
        return "Channel[" + name + ", tail " + fifo.tail() + (faulted ? ", failed" : "") + "]";
    }
}
