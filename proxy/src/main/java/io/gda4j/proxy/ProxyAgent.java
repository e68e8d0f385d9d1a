package io.gda4j.proxy;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentTerminationException;

/**
 * One proxy thread's work, as an Agrona {@link Agent}: poll each of its channels, handing published triggers to their
 * handlers. The channel set is an array replaced as a whole (copy on write) by the service, so {@link #doWork()} reads
 * one volatile field and allocates nothing.
 *
 * <p>Each cycle also leaves a heartbeat for other threads (a cycle counter and, every {@value #HEARTBEAT_EVERY}
 * cycles, the time; both stored with release and loaded with acquire), so {@link ProxyThread} can tell a working
 * thread from one blocked inside a handler.
 */
final class ProxyAgent implements Agent {
    private static final Channel[] NONE = new Channel[0];
    /** A heartbeat time every this many cycles: nanoTime costs more than an idle cycle. */
    private static final int HEARTBEAT_EVERY = 256;
    /**
     * Thrown by {@link #doWork()} once {@link #stop()} was called: Agrona's runner ends its loop on it. Made once, with
     * no stack trace, since it is control flow.
     */
    static final AgentTerminationException STOPPED =
            new AgentTerminationException("proxy thread stopped", null, false, false);

    private static final VarHandle CYCLES;
    private static final VarHandle HEARTBEAT_NANOS;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            CYCLES = lookup.findVarHandle(ProxyAgent.class, "cycles", long.class);
            HEARTBEAT_NANOS = lookup.findVarHandle(ProxyAgent.class, "heartbeatNanos", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final String roleName;
    private volatile Channel[] channels = NONE;
    private volatile boolean stopping;
    @SuppressWarnings("unused") // accessed through CYCLES
    private long cycles;
    @SuppressWarnings("unused") // accessed through HEARTBEAT_NANOS
    private long heartbeatNanos;

    ProxyAgent(String roleName) {
        this.roleName = roleName;
        HEARTBEAT_NANOS.setRelease(this, System.nanoTime());
    }

    @Override
    public int doWork() {
        if (stopping) {
            throw STOPPED;
        }
        final Channel[] cs = channels;
        int work = 0;
        for (int i = 0; i < cs.length; i++) {
            work += cs[i].poll();
        }
        long c = (long) CYCLES.get(this) + 1; // only this thread writes it
        CYCLES.setRelease(this, c);
        if ((c & (HEARTBEAT_EVERY - 1)) == 0) {
            HEARTBEAT_NANOS.setRelease(this, System.nanoTime());
        }
        return work;
    }

    @Override
    public String roleName() {
        return roleName;
    }

    /** Asks the loop to end after the cycle in progress (the next {@link #doWork()} throws {@link #STOPPED}). */
    void stop() {
        stopping = true;
    }

    /** Work cycles completed so far; pairs with the release store at the end of each cycle. */
    long cyclesAcquire() {
        return (long) CYCLES.getAcquire(this);
    }

    /** {@link System#nanoTime()} at a recent cycle (acquire). */
    long heartbeatNanosAcquire() {
        return (long) HEARTBEAT_NANOS.getAcquire(this);
    }

    /** Restarts the heartbeat clock, e.g. when the thread starts. */
    void heartbeatNow() {
        HEARTBEAT_NANOS.setRelease(this, System.nanoTime());
    }

    /** Callers hold the service's lock. */
    void add(Channel c) {
        Channel[] cs = Arrays.copyOf(channels, channels.length + 1);
        cs[cs.length - 1] = c;
        channels = cs;
    }

    /** Callers hold the service's lock. Returns whether it was there. */
    boolean remove(Channel c) {
        Channel[] cs = channels;
        for (int i = 0; i < cs.length; i++) {
            if (cs[i] == c) {
                Channel[] next = new Channel[cs.length - 1];
                System.arraycopy(cs, 0, next, 0, i);
                System.arraycopy(cs, i + 1, next, i, cs.length - i - 1);
                channels = next;
                return true;
            }
        }
        return false;
    }

    Channel[] channels() {
        return channels;
    }
}
