package io.gda4j.proxy;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.function.BiConsumer;

/**
 * Runs one {@link Agent} on its own daemon thread: {@code doWork()}, then the idle strategy, until closed. A
 * throwable escaping {@code doWork()} ends the thread: the runner records it ({@link #failure()}), reports it to the
 * failure listener, and the thread is then dead, not silently stuck.
 *
 * <p>A heartbeat (a cycle counter and the time of a recent cycle, both written with release and read with acquire)
 * lets other threads tell a working runner from one blocked inside {@code doWork()}.
 */
public final class AgentRunner implements AutoCloseable {
    /** The runner's life: NEW until started, then RUNNING, then CLOSED (asked to stop) or FAILED (doWork threw). */
    public enum State { NEW, RUNNING, CLOSED, FAILED }

    private static final VarHandle CYCLES;
    private static final VarHandle HEARTBEAT_NANOS;
    /** A heartbeat every this many cycles: nanoTime costs more than an idle cycle. */
    private static final int HEARTBEAT_EVERY = 256;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            CYCLES = lookup.findVarHandle(AgentRunner.class, "cycles", long.class);
            HEARTBEAT_NANOS = lookup.findVarHandle(AgentRunner.class, "heartbeatNanos", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Agent agent;
    private final IdleStrategy idle;
    private final BiConsumer<AgentRunner, Throwable> onFailure;
    private final Thread thread;
    private volatile boolean running;
    private volatile State state = State.NEW;
    private volatile Throwable failure;
    private volatile Instant failedAt;
    @SuppressWarnings("unused") // accessed through CYCLES
    private long cycles;
    @SuppressWarnings("unused") // accessed through HEARTBEAT_NANOS
    private long heartbeatNanos;

    /**
     * @param onFailure called once on the agent's thread when {@code doWork()} throws, before the thread ends
     */
    public AgentRunner(Agent agent, IdleStrategy idle, BiConsumer<AgentRunner, Throwable> onFailure) {
        this.agent = Objects.requireNonNull(agent, "agent");
        this.idle = Objects.requireNonNull(idle, "idle strategy");
        this.onFailure = Objects.requireNonNull(onFailure, "failure listener");
        this.thread = new Thread(this::run, agent.roleName());
        this.thread.setDaemon(true); // a world left open must not keep the JVM alive with a spinning thread
    }

    /** Starts the thread (once). */
    public synchronized AgentRunner start() {
        if (state != State.NEW) {
            throw new IllegalStateException(agent.roleName() + " was already started");
        }
        running = true;
        state = State.RUNNING;
        HEARTBEAT_NANOS.setRelease(this, System.nanoTime());
        thread.start();
        return this;
    }

    public Agent agent() {
        return agent;
    }

    public String name() {
        return agent.roleName();
    }

    public State state() {
        return state;
    }

    /** Whether the thread is running the loop now. */
    public boolean isAlive() {
        return thread.isAlive();
    }

    /** What ended the thread, or null. */
    public Throwable failure() {
        return failure;
    }

    /** When it failed, or null. */
    public Instant failedAt() {
        return failedAt;
    }

    /** Work cycles completed so far (acquire). */
    public long cycles() {
        return (long) CYCLES.getAcquire(this);
    }

    /** How long since the thread last showed it was cycling; grows without bound while blocked in doWork. */
    public Duration sinceHeartbeat() {
        return Duration.ofNanos(Math.max(0, System.nanoTime() - (long) HEARTBEAT_NANOS.getAcquire(this)));
    }

    /**
     * Waits until the agent has completed {@code count} more cycles than when called (so a cycle that began after the
     * call has ended), or the thread is not running, or {@code timeout} passed. True unless it timed out.
     */
    public boolean awaitCycles(int count, Duration timeout) {
        long target = cycles() + count;
        long deadline = System.nanoTime() + timeout.toNanos();
        while (cycles() < target) {
            if (!thread.isAlive() || state != State.RUNNING) {
                return true;
            }
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            Thread.onSpinWait();
        }
        return true;
    }

    private void run() {
        long localCycles = 0;
        try {
            while (running) {
                int work = agent.doWork();
                localCycles++;
                CYCLES.setRelease(this, localCycles);
                if ((localCycles & (HEARTBEAT_EVERY - 1)) == 0) {
                    HEARTBEAT_NANOS.setRelease(this, System.nanoTime());
                }
                idle.idle(work);
            }
            agent.onClose();
        } catch (Throwable t) {
            failure = t;
            failedAt = Instant.now();
            state = State.FAILED;
            try {
                onFailure.accept(this, t);
            } catch (Throwable listenerFailure) {
                t.addSuppressed(listenerFailure);
            }
        }
    }

    /**
     * Stops the loop and waits up to {@code timeout} for the thread to end. Returns false when it is still running
     * (blocked inside {@code doWork()}); it is then interrupted and left to end on its own.
     */
    public boolean stop(Duration timeout) {
        synchronized (this) {
            if (state == State.RUNNING) {
                state = State.CLOSED;
            }
            running = false;
        }
        if (!thread.isAlive() || Thread.currentThread() == thread) {
            return true;
        }
        try {
            thread.join(Math.max(1, timeout.toMillis()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            thread.interrupt();
            return false;
        }
        return true;
    }

    @Override
    public void close() {
        stop(Duration.ofSeconds(5));
    }

    @Override
    public String toString() {
        return "AgentRunner[" + name() + ", " + state + "]";
    }
}
