package io.gda4j.bootstrap;

import static io.gda4j.bootstrap.BootstrapFrameDescriptor.HEARTBEAT;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.PEER_FAILED;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The liveness of a {@link Bootstrap}: heartbeats both ways, a peer silent or not reading for dead-after declared
 * dead, and a peer's death spread once per rank (the listener, the survivors when this is the root, every waiting
 * call). Silence is counted in bytes, not frames: a peer whose large frame is still arriving (a result on a slow
 * path, with its heartbeats queued behind it) is heard from ({@link PeerLink#lastReadNanos}). {@link #heartbeatLoop}
 * runs on the heartbeat thread; {@link #peerDied} and {@link #connectionLost} on any thread that sees a peer fail (a
 * reader, a writer, the heartbeat thread, the joining thread). {@code reportedDead} is guarded by the bootstrap's
 * lock, which this class shares.
 */
final class Liveness {
    private static final long MONITOR_TICK_MILLIS = 50;
    /**
     * How long a failed write waits for the connection's reader before it blames the peer: the frames the peer sent
     * before it went are already here, and the first verdict must be theirs (a root that declared another rank dead
     * and closed: a member whose part was still being written must blame that rank, not the root).
     */
    static final long WRITE_FAILURE_GRACE_MILLIS = 200;

    private final Bootstrap world;
    private final BootstrapConfig config;
    private final int rank;
    private final int size;
    private final Object lock;
    private final PeerFailureListener listener;
    /** The bootstrap's links: root, links[r] to rank r; member, links[0] to the root. */
    private final PeerLink[] links;
    /** When each peer's window last began afresh (the world complete, a pause of this process); its bytes count too. */
    private final AtomicLongArray lastHeardNanos;
    private final boolean[] reportedDead;
    /** The heartbeat thread's latest tick, and the end and length of the latest pause of this process it saw. */
    private volatile long lastTickNanos = System.nanoTime();
    private volatile long pauseEndedNanos;
    private volatile long pauseNanos;

    Liveness(Bootstrap world, BootstrapConfig config, Object lock, PeerLink[] links, PeerFailureListener listener) {
        this.world = world;
        this.config = config;
        this.rank = config.rank();
        this.size = config.worldSize();
        this.lock = lock;
        this.links = links;
        this.listener = listener;
        this.lastHeardNanos = new AtomicLongArray(size);
        this.reportedDead = new boolean[size];
    }

    /** The joining thread, as the world starts: rank {@code peer}'s silence is counted from {@code nowNanos}. */
    void heardFrom(int peer, long nowNanos) {
        lastHeardNanos.set(peer, nowNanos);
    }

    /** The joining thread, as the heartbeat thread starts: the time spent joining was no pause. */
    void tickedNow() {
        lastTickNanos = System.nanoTime();
    }

    /** Under the lock: rank {@code peer} left, not dead: no listener call, no later death notice. */
    void recordLeft(int peer) {
        reportedDead[peer] = true;
    }

    /** Under the lock: whether rank {@code r} is dead or gone. */
    boolean deadUnderLock(int r) {
        return reportedDead[r];
    }

    /** The heartbeat thread: sends heartbeats, and declares dead a peer silent or not reading for dead-after. */
    void heartbeatLoop() {
        long intervalNanos = TimeUnit.MILLISECONDS.toNanos(config.heartbeatIntervalMillis());
        long deadNanos = TimeUnit.MILLISECONDS.toNanos(config.deadAfterMillis());
        long lastSent = 0;
        long lastTick = lastTickNanos;
        while (!world.closing()) {
            long now = System.nanoTime();
            if (now - lastTick > deadNanos / 2) {
                pauseNanos = now - lastTick;
                pauseEndedNanos = now;
                // This process was stopped or starved (SIGSTOP, a long GC pause): it could hear no one and write to no
                // one meanwhile, so every peer gets a fresh window; the root's verdict on this rank, if any, is already
                // on its way, and a peer that dropped this process shows as a lost connection (connectionLost).
                for (int r = 0; r < size; r++) {
                    lastHeardNanos.set(r, now);
                    PeerLink l = links[r];
                    if (l != null) {
                        l.restartStallWindow(now);
                    }
                }
            }
            lastTick = now;
            lastTickNanos = now;
            boolean send = now - lastSent >= intervalNanos;
            if (send) {
                lastSent = now;
            }
            for (int r = 0; r < size; r++) {
                PeerLink l = links[r];
                boolean live;
                synchronized (lock) {
                    live = l != null && !reportedDead[r];
                }
                if (!live) {
                    continue;
                }
                long stalled = l.stalledNanos(now);
                if (stalled > deadNanos) {
                    peerDied(r, "stopped reading: its connection took no bytes for "
                            + TimeUnit.NANOSECONDS.toMillis(stalled) + " ms with " + l.unsentBytes()
                            + " bytes to send (limit " + config.deadAfterMillis() + " ms)");
                    continue;
                }
                if (send && l.idle()) {
                    l.send(HEARTBEAT); // behind a frame still being written it would say nothing new
                }
                long silent = now - Math.max(lastHeardNanos.get(r), l.lastReadNanos());
                if (silent > deadNanos) {
                    peerDied(r, "silent for " + TimeUnit.NANOSECONDS.toMillis(silent) + " ms (no byte within "
                            + config.deadAfterMillis() + " ms)", true);
                }
            }
            sleep(MONITOR_TICK_MILLIS);
        }
    }

    /** Rank {@code dead} is gone: once per rank, tell the listener, (root) tell the survivors, fail every call. */
    void peerDied(int dead, String why) {
        peerDied(dead, why, false);
    }

    /**
     * The connection to rank {@code peer} closed or failed under a reader or a writer. Right after a pause of this
     * process long enough to be dropped, it was the peer that dropped this process (it could not answer or read
     * meanwhile, and a verdict could not reach it through a full connection): this process names its own pause, a
     * member for the root's connection, the root for any rank's. Otherwise the peer is dead.
     */
    void connectionLost(int peer, String why) {
        long paused = peer != rank && (rank == 0 || peer == 0) ? pausedJustNowNanos() : 0;
        if (paused > 0) {
            peerDied(rank, "this process was paused (stopped or starved) for " + TimeUnit.NANOSECONDS.toMillis(paused)
                    + " ms, too long for the dead-after of " + config.deadAfterMillis() + " ms, and "
                    + (rank == 0 ? "its ranks" : "the root") + " dropped it meanwhile (rank " + peer + ": " + why + ")",
                    false);
        } else {
            peerDied(peer, why, false);
        }
    }

    /**
     * A write to rank {@code peer} failed: once the connection's reader has had {@link #WRITE_FAILURE_GRACE_MILLIS}
     * to take what the peer sent before it went (its end of the connection then ends the reader, which blames the
     * peer itself), the peer is failed as {@link #connectionLost} fails it, unless a verdict came first.
     */
    void writeFailed(int peer, String why) {
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(WRITE_FAILURE_GRACE_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            connectionLost(peer, why);
            PeerLink l = links[peer];
            if (l != null) {
                l.close();
            }
        }, "gda4j-bootstrap-" + rank + "-write-failure-" + peer);
        t.setDaemon(true);
        t.start();
    }

    /**
     * Rank {@code peer} sent what the protocol does not allow (or what was changed on the way): it is failed as if
     * dead, and the root tells it why before closing its connection.
     */
    void peerBrokeProtocol(int peer, String why) {
        peerDied(peer, why, true);
    }

    /**
     * @param tellTheDead the root also tells {@code dead} (a silent rank may only be stopped, and reads the verdict
     *                    when it resumes instead of blaming the root for the closed connection; a rank whose frame
     *                    broke the protocol learns which); never for a rank that stopped reading, whose link must
     *                    close at once to free its writer
     */
    private void peerDied(int dead, String why, boolean tellTheDead) {
        PeerFailedException e;
        synchronized (lock) {
            if (world.closing() || reportedDead[dead] || reportedDead[rank]) {
                return; // a rank the root declared dead blames no one else for what follows
            }
            reportedDead[dead] = true;
            e = new PeerFailedException(dead, "rank " + dead + " failed: " + why + " (seen by rank " + rank + ")");
        }
        PeerLink deadLink = links[dead];
        if (deadLink != null && tellTheDead && rank == 0) {
            deadLink.send(PEER_FAILED, BootstrapFrameDescriptor.peerFailed(dead, why));
            deadLink.closeWhenDrained();
        } else if (deadLink != null) {
            deadLink.close(); // also frees a writer blocked on a peer that stopped reading
        }
        if (rank == 0) {
            byte[] notice = BootstrapFrameDescriptor.peerFailed(dead, why);
            for (int r = 1; r < size; r++) {
                PeerLink other = links[r];
                if (r != dead && other != null) {
                    other.send(PEER_FAILED, notice);
                }
            }
        }
        world.failLocally(e);
        try {
            listener.onPeerFailure(dead, why);
        } catch (RuntimeException ignored) {
            // a listener's bug must not stop failure handling of the other ranks
        }
    }

    /**
     * How long this process was just paused, or 0: its heartbeat thread has not ticked for half of dead-after (the
     * pause is now ending), or it saw such a pause within the last dead-after; and the pause was long enough for a
     * peer to drop this process (dead-after less the heartbeat interval: its last bytes may have gone that much before
     * the pause began). A shorter pause blames no one.
     */
    private long pausedJustNowNanos() {
        long now = System.nanoTime();
        long deadNanos = TimeUnit.MILLISECONDS.toNanos(config.deadAfterMillis());
        long half = deadNanos / 2;
        long sinceTick = now - lastTickNanos;
        long ended = pauseEndedNanos;
        long paused = sinceTick > half ? sinceTick : ended != 0 && now - ended < deadNanos ? pauseNanos : 0;
        long droppable = deadNanos - TimeUnit.MILLISECONDS.toNanos(config.heartbeatIntervalMillis());
        return paused >= droppable ? paused : 0;
    }

    /** Whether rank {@code r} is dead or gone (takes the lock). */
    boolean dead(int r) {
        synchronized (lock) {
            return reportedDead[r];
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
