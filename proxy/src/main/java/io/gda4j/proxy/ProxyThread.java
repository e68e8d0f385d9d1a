package io.gda4j.proxy;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.function.BiConsumer;

import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.IdleStrategy;

/**
 * One proxy thread: Agrona's {@link AgentRunner} driving a {@link ProxyAgent} with the configured idle strategy, on a
 * daemon thread, plus what the proxy needs beyond Agrona's runner:
 * <ul>
 *   <li>a dead thread is a failure, not a log line: a throwable out of {@code doWork()} ends the thread, is recorded
 *       ({@link #failure()}, {@link #failedAt()}) and is handed to the failure listener, which fails the channels so
 *       they report the dead thread by name (Agrona's runner alone would log it and keep looping);</li>
 *   <li>a heartbeat ({@link #cycles()}, {@link #sinceHeartbeat()}) that tells a working thread from one blocked
 *       inside a handler;</li>
 *   <li>a bounded stop ({@link #stop(Duration)}): a thread blocked in a CUDA call is reported, not waited for forever
 *       (Agrona's {@code close()} retries until the thread ends).</li>
 * </ul>
 */
public final class ProxyThread implements AutoCloseable {
    /** The thread's life: NEW until started, then RUNNING, then CLOSED (asked to stop) or FAILED (doWork threw). */
    public enum State { NEW, RUNNING, CLOSED, FAILED }

    private final ProxyAgent agent;
    private final AgentRunner runner;
    private final BiConsumer<ProxyThread, Throwable> onFailure;
    private volatile Thread thread;
    private volatile State state = State.NEW;
    private volatile Throwable failure;
    private volatile Instant failedAt;

    /**
     * @param onFailure called once on the agent's thread when {@code doWork()} throws, before the thread ends
     */
    ProxyThread(ProxyAgent agent, IdleStrategy idle, BiConsumer<ProxyThread, Throwable> onFailure) {
        this.agent = Objects.requireNonNull(agent, "agent");
        this.onFailure = Objects.requireNonNull(onFailure, "failure listener");
        this.runner = new AgentRunner(Objects.requireNonNull(idle, "idle strategy"), this::onError, null, agent);
    }

    /** Starts the thread (once). */
    public synchronized ProxyThread start() {
        if (state != State.NEW) {
            throw new IllegalStateException(agent.roleName() + " was already started");
        }
        state = State.RUNNING;
        agent.heartbeatNow();
        thread = AgentRunner.startOnThread(runner, r -> {
            Thread t = new Thread(r);
            t.setDaemon(true); // a world left open must not keep the JVM alive with a spinning thread
            t.setUncaughtExceptionHandler((dead, e) -> {
                // already recorded and reported by onError; Agrona rethrows an Error after reporting it
            });
            return t;
        });
        return this;
    }

    /** Agrona's error handler, on the agent's thread. */
    private void onError(Throwable t) {
        if (t == ProxyAgent.STOPPED) {
            return;
        }
        failure = t;
        failedAt = Instant.now();
        state = State.FAILED;
        agent.stop(); // an Error ends Agrona's loop by itself; an exception would be retried, so end it here
        try {
            onFailure.accept(this, t);
        } catch (Throwable listenerFailure) {
            t.addSuppressed(listenerFailure);
        }
    }

    public String name() {
        return agent.roleName();
    }

    public State state() {
        return state;
    }

    /** Whether the thread is running the loop now. */
    public boolean isAlive() {
        Thread t = thread;
        return t != null && t.isAlive();
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
        return agent.cyclesAcquire();
    }

    /** How long since the thread last showed it was cycling; grows without bound while blocked in doWork. */
    public Duration sinceHeartbeat() {
        return Duration.ofNanos(Math.max(0, System.nanoTime() - agent.heartbeatNanosAcquire()));
    }

    /**
     * Waits until the agent has completed {@code count} more cycles than when called (so a cycle that began after the
     * call has ended), or the thread is not running, or {@code timeout} passed. True unless it timed out.
     */
    public boolean awaitCycles(int count, Duration timeout) {
        long target = cycles() + count;
        long deadline = System.nanoTime() + timeout.toNanos();
        while (cycles() < target) {
            if (!isAlive() || state != State.RUNNING) {
                return true;
            }
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            Thread.onSpinWait();
        }
        return true;
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
            agent.stop();
        }
        Thread t = thread;
        if (t == null || !t.isAlive() || Thread.currentThread() == t) {
            return true;
        }
        try {
            t.join(Math.max(1, timeout.toMillis()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (t.isAlive()) {
            t.interrupt();
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
        return "ProxyThread[" + name() + ", " + state + "]";
    }
}
