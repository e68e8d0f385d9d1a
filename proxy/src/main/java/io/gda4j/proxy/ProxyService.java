package io.gda4j.proxy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The host proxy: {@link ProxyConfig#threads()} daemon threads, each a {@link ProxyThread} (Agrona's agent runner)
 * polling its set of {@link Channel}s with the configured idle strategy (busy spin by default). Channels are added and removed while it
 * runs; closing it stops the threads and drains every channel still registered.
 *
 * <p>Shutdown contract: whatever a channel had published when it is removed (or the service closed) is executed,
 * and the close waits up to {@link ProxyConfig#closeTimeout()} for that work to complete. Work that did not complete
 * by then, or triggers published half-written or after a failure, make {@link #remove} / {@link #close} throw a
 * {@link ProxyException} that lists them. Afterwards the channel's state word says STOPPED (FAILED after an error),
 * so a GPU still pushing fails at once with ERROR_PROXY_STOPPED instead of waiting out its timeout.
 *
 * <p>A thread that dies (a throwable out of its loop) fails its channels, which raise their ranks' abort flags and
 * report the dead thread by name through {@link Channel#problem()}.
 */
public final class ProxyService implements AutoCloseable {
    private static final AtomicInteger SERVICES = new AtomicInteger();

    private final String name;
    private final ProxyConfig config;
    private final ProxyAgent[] agents;
    private final ProxyThread[] runners;
    private final Object lock = new Object();
    private boolean closed;

    public ProxyService(ProxyConfig config) {
        this.config = config;
        int id = SERVICES.incrementAndGet();
        this.name = "gda4j-proxy-" + id;
        int n = config.threads();
        this.agents = new ProxyAgent[n];
        this.runners = new ProxyThread[n];
        for (int i = 0; i < n; i++) {
            agents[i] = new ProxyAgent(name + "." + i);
            runners[i] = new ProxyThread(agents[i], config.newIdleStrategy(), this::threadDied);
        }
        for (ProxyThread r : runners) {
            r.start();
        }
    }

    public String name() {
        return name;
    }

    public ProxyConfig config() {
        return config;
    }

    /** The proxy threads, for diagnostics. */
    public List<ProxyThread> threads() {
        return List.of(runners);
    }

    /** Registers {@code channel} with thread {@code affinity mod threads}; it is polled from now on. */
    public void add(Channel channel, int affinity) {
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException("proxy service " + name + " is closed: build a new world");
            }
            int i = Math.floorMod(affinity, agents.length);
            channel.assign(runners[i]);
            agents[i].add(channel);
        }
    }

    /** Whether {@link #close()} has been called. */
    public boolean isClosed() {
        synchronized (lock) {
            return closed;
        }
    }

    /** Number of channels registered. */
    public int channelCount() {
        synchronized (lock) {
            int n = 0;
            for (ProxyAgent a : agents) {
                n += a.channels().length;
            }
            return n;
        }
    }

    /**
     * Unregisters {@code channel}, waits until its thread no longer polls it, then drains it on this thread.
     *
     * @throws ProxyException when pending work could not be completed (the message lists it)
     */
    public void remove(Channel channel) {
        ProxyThread owner = channel.owner();
        boolean wasRegistered = false;
        synchronized (lock) {
            for (ProxyAgent a : agents) {
                wasRegistered |= a.remove(channel);
            }
        }
        if (wasRegistered && owner != null && !owner.awaitCycles(2, config.closeTimeout())) {
            // Its thread is stuck inside this channel's handler (or another's): draining from here would race it.
            channel.fault("could not be closed cleanly: its proxy thread " + owner.name() + " did not finish a polling"
                    + " cycle within " + config.closeTimeout().toMillis() + " ms", null);
            throw new ProxyException(channel.problem().orElse("proxy channel " + channel.name() + " not drained"));
        }
        Optional<String> trouble = channel.drain(config.closeTimeout(), "its link was closed");
        if (trouble.isPresent()) {
            throw new ProxyException(trouble.get());
        }
    }

    /**
     * Stops the threads and drains every channel still registered (see the class comment). Idempotent.
     *
     * @throws ProxyException listing the work that could not be completed
     */
    @Override
    public void close() {
        List<Channel> left = new ArrayList<>();
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
        }
        List<String> troubles = new ArrayList<>();
        for (ProxyThread r : runners) {
            if (!r.stop(config.closeTimeout())) {
                troubles.add("proxy thread " + r.name() + " did not stop within " + config.closeTimeout().toMillis()
                        + " ms (blocked in a CUDA call?); its channels were not drained");
            }
        }
        synchronized (lock) {
            for (int i = 0; i < agents.length; i++) {
                for (Channel c : agents[i].channels()) {
                    if (runners[i].isAlive()) {
                        c.fault("was abandoned: its proxy thread " + runners[i].name() + " would not stop", null);
                    } else {
                        left.add(c);
                    }
                }
            }
        }
        for (Channel c : left) {
            c.drain(config.closeTimeout(), "the proxy service " + name + " was closed").ifPresent(troubles::add);
        }
        if (!troubles.isEmpty()) {
            throw new ProxyException("closing proxy service " + name + " left work undone: " + String.join("; ", troubles));
        }
    }

    /** On the dying thread: its channels can never run again. */
    private void threadDied(ProxyThread runner, Throwable cause) {
        for (int i = 0; i < runners.length; i++) {
            if (runners[i] == runner) {
                for (Channel c : agents[i].channels()) {
                    c.ownerDied(runner, cause);
                }
            }
        }
    }

    @Override
    public String toString() {
        return "ProxyService[" + name + ", " + runners.length + " thread(s)]";
    }
}
