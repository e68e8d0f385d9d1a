package io.gda4j.bootstrap;

import static io.gda4j.bootstrap.BootstrapFrameDescriptor.ABORT;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.COLLECTIVE;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.FAIL;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.GOODBYE;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.HEARTBEAT;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.KIND_ALL_GATHER;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.KIND_BARRIER;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.PEER_FAILED;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.READY;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.RESULT;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.WELCOME;

import io.gda4j.bootstrap.BootstrapFrameDescriptor.FrameException;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The bootstrap of a world of many processes: a star of TCP connections with rank 0 (the root) at the centre.
 * Every rank connects to the root and says hello (magic, version, rank, world size, a nonce); each side then proves
 * it knows the job token with an HMAC over both nonces, so the token never crosses the wire and a rank never joins a
 * root that does not know it. The root refuses a wrong hello on that connection alone, so a stray client or another
 * job's process never disturbs the job. The handshake gives each connection session keys, and every frame after it
 * carries a MAC: a frame changed, dropped or replayed on the way fails its rank, named. When all ranks have joined,
 * {@link #allGather} and {@link #barrier} run over the same connections, the root relaying.
 *
 * <p>Heartbeats flow both ways every {@link BootstrapConfig#heartbeatIntervalMillis()}; a peer from which no byte
 * came for {@link BootstrapConfig#deadAfterMillis()} (a large frame still arriving counts as alive) or whose
 * connection closes is dead: the root tells the survivors, the
 * {@link PeerFailureListener} hears of it once per rank, and every pending and later call throws a
 * {@link PeerFailedException} naming it. Each connection has its own writer thread, so a peer that stops reading
 * (a stopped process) blocks no one: when its connection takes no bytes for dead-after it is dead the same way, and
 * the others keep their heartbeats. A peer that sends what the protocol does not allow (a frame that does not parse,
 * a part of the wrong collective or over the limit) is failed at once, named, without a stack trace. Collectives are
 * called by one thread at a time per process, in the same order in every process (as in MPI); they are not
 * thread-safe.
 *
 * <p>This class holds the world and its frame switch (each incoming frame dispatched by type); the allGather and
 * barrier bookkeeping at the root and at a member is {@code Collectives}, heartbeats, dead-after and the spreading of
 * a peer's failure {@code Liveness}, the root's door {@code RootGate}, a member's way in {@code MemberJoin}, and one
 * connection with its writer thread {@code PeerLink}.
 */
public final class Bootstrap implements AutoCloseable {
    /** A rank waits this much longer than the root (to join, in a collective), so that the root's message naming
     *  the missing ranks reaches it before its own, vaguer, timeout. */
    static final long MEMBER_GRACE_MILLIS = 2_000;
    /** How long close() lets a dead peer's link write the verdict it was told (a PEER_FAILED frame). */
    private static final long VERDICT_FLUSH_MILLIS = 200;
    /** Connections the root's listening socket queues before the gate takes them (the kernel may cap it lower). */
    private static final int BACKLOG = 1024;

    private final BootstrapConfig config;
    private final int rank;
    private final int size;
    private final PeerFailureListener listener;
    private final Object lock = new Object();
    /** Root: links[r] to rank r (links[0] null). Member: links[0] to the root. */
    private final PeerLink[] links;
    /** Heartbeats, dead-after detection and the spreading of a peer's failure, under {@link #lock}. */
    private final Liveness liveness;
    private final List<Thread> threads = new ArrayList<>();
    /** The allGather and barrier bookkeeping, under {@link #lock}. */
    private final Collectives collectives;
    /** Root: admits, times and checks the hellos of the connections it accepts. */
    private RootGate gate;
    private ServerSocketChannel server;
    private int joined;
    private boolean complete;
    private volatile BootstrapException failure;
    private volatile boolean closing;

    private Bootstrap(BootstrapConfig config, PeerFailureListener listener) {
        this.config = config;
        this.rank = config.rank();
        this.size = config.worldSize();
        this.listener = listener;
        this.links = new PeerLink[size];
        this.liveness = new Liveness(this, config, lock, links, listener);
        this.collectives = new Collectives(this, config, lock, links);
    }

    /**
     * Joins the world: rank 0 listens at the root's port and waits for every rank; the others connect (retrying
     * until the root listens) and wait until the world is complete.
     *
     * @throws BootstrapException refused, or not complete within the join timeout (naming the missing ranks)
     */
    public static Bootstrap join(BootstrapConfig config, PeerFailureListener listener) {
        if (config.rank() == 0) {
            String warning = LaunchEnvironment.guessableTokenWarning(config.jobToken());
            if (warning != null) {
                System.err.println(warning);
            }
            ServerSocketChannel s = null;
            try {
                s = ServerSocketChannel.open();
                s.setOption(StandardSocketOptions.SO_REUSEADDR, true);
                s.bind(listenAddress(config.root()), BACKLOG);
            } catch (IOException e) {
                if (s != null) {
                    PeerLink.closeQuietly(s);
                }
                throw new BootstrapException("rank 0 cannot listen on port " + config.root().getPort() + " for the "
                        + "bootstrap (" + e.getMessage() + "): choose a free port in " + LaunchEnvironment.GDA4J_ROOT,
                        e);
            }
            return joinAsRoot(config, listener, s);
        }
        Bootstrap b = new Bootstrap(config, listener);
        try {
            b.joinAsMember();
        } catch (RuntimeException e) {
            b.close();
            throw e;
        }
        return b;
    }

    /**
     * Where the root listens: the address it was given when that is loopback (a one-host job is then unreachable
     * from other hosts), else every interface (the given name may be one of several addresses of this host).
     */
    static InetSocketAddress listenAddress(InetSocketAddress root) {
        try {
            InetAddress given = root.isUnresolved() ? InetAddress.getByName(root.getHostString()) : root.getAddress();
            if (given.isLoopbackAddress()) {
                return new InetSocketAddress(given, root.getPort());
            }
        } catch (IOException e) {
            // an unknown name: the members will say so when they connect
        }
        return new InetSocketAddress(root.getPort());
    }

    /**
     * The root on a socket the caller bound (a test's ephemeral port): one of a {@link ServerSocketChannel}
     * ({@code ServerSocketChannel.open().bind(...).socket()}), which the root's gate selects on.
     */
    static Bootstrap join(BootstrapConfig config, PeerFailureListener listener, ServerSocket bound) {
        ServerSocketChannel channel = bound.getChannel();
        if (channel == null) {
            throw new IllegalArgumentException("the root's socket must be a ServerSocketChannel's: bind it with "
                    + "ServerSocketChannel.open().bind(address)");
        }
        return joinAsRoot(config, listener, channel);
    }

    private static Bootstrap joinAsRoot(BootstrapConfig config, PeerFailureListener listener,
                                        ServerSocketChannel bound) {
        Bootstrap b = new Bootstrap(config, listener);
        b.server = bound;
        try {
            b.joinAsRoot();
        } catch (RuntimeException e) {
            b.close();
            throw e;
        }
        return b;
    }

    public int rank() {
        return rank;
    }

    public int worldSize() {
        return size;
    }

    /** Every rank's bytes, in rank order, the same in every process. */
    public byte[][] allGather(byte[] mine) {
        if (mine.length > config.maxMessageBytes()) {
            throw new IllegalArgumentException("all-gather of " + mine.length + " bytes: the bootstrap carries at most "
                    + config.maxMessageBytes() + " per rank (BootstrapConfig.maxMessageBytes)");
        }
        return collectives.collective(KIND_ALL_GATHER, mine.clone()); // sent later, by a writer: our own copy
    }

    /** Returns when every rank has entered the barrier. */
    public void barrier() {
        collectives.collective(KIND_BARRIER, new byte[0]);
    }

    /**
     * Tells every other rank that this one stopped its kernels (a device error, or the host's abort), so they can
     * stop theirs instead of waiting for their timeout: they hear it through
     * {@link PeerFailureListener#onPeerAbort}. Collectives go on working. Best effort: a rank that is gone misses it.
     */
    public void announceAbort(String why) {
        byte[] notice = BootstrapFrameDescriptor.abort(rank, why);
        if (rank == 0) {
            relayAbort(0, notice);
        } else if (links[0] != null) {
            links[0].send(ABORT, notice);
        }
    }

    /** Root: sends an abort notice to every rank but its origin. */
    private void relayAbort(int origin, byte[] notice) {
        for (int r = 1; r < size; r++) {
            PeerLink l = links[r];
            if (r != origin && l != null) {
                l.send(ABORT, notice); // a dead or gone rank's link drops it
            }
        }
    }

    /** Whether {@link #close} has begun (a volatile read). */
    boolean closing() {
        return closing;
    }

    /** The failure that ended this world, or null while it is healthy. */
    public BootstrapException failure() {
        return failure;
    }

    // ---- joining ----------------------------------------------------------------------------------------------

    private void joinAsRoot() {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.joinTimeoutMillis());
        int port = server.socket().getLocalPort();
        try {
            gate = new RootGate(config, server, this::register);
        } catch (IOException e) {
            throw new BootstrapException("rank 0 cannot watch port " + port + " for the bootstrap: " + e.getMessage(),
                    e);
        }
        startThread("gate", gate::run);
        synchronized (lock) {
            while (joined < size - 1) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    StringJoiner missing = new StringJoiner(", ");
                    for (int r = 1; r < size; r++) {
                        if (links[r] == null) {
                            missing.add(Integer.toString(r));
                        }
                    }
                    BootstrapException e = new BootstrapException("bootstrap at port " + port
                            + ": rank(s) " + missing + " did not arrive within " + config.joinTimeoutMillis()
                            + " ms (" + joined + " of " + (size - 1) + " joined): are those processes running, with "
                            + "the same root address and job token?" + gate.refusalsNamed());
                    failWorld(e);
                    throw e;
                }
                waitOn(left);
            }
            complete = true;
            long now = System.nanoTime();
            for (int r = 1; r < size; r++) {
                liveness.heardFrom(r, now);
            }
        }
        for (int r = 1; r < size; r++) {
            PeerLink l = links[r];
            l.send(READY);
            int peer = r;
            startThread("read-r" + r, () -> readLoop(peer, l));
        }
        liveness.tickedNow(); // the heartbeat thread starts now: the join was no pause
        startThread("heartbeat", liveness::heartbeatLoop);
        throwIfFailed();
    }

    /**
     * Root, from the gate's thread: registers a proven rank, welcomes it with {@code welcome} (the root's proof) and
     * starts its link with the session keys; or says why not.
     */
    private String register(int peer, Socket socket, byte[] welcome, byte[] rankKey, byte[] rootKey)
            throws IOException {
        synchronized (lock) {
            if (complete || closing) {
                return "the world of " + size + " is already complete";
            } else if (links[peer] != null) {
                return "rank " + peer + " has already joined: is the same rank started twice?";
            }
            PeerLink registered = new PeerLink(peer, socket, liveness::writeFailed);
            registered.authenticate(rootKey, rankKey);
            // the welcome is a few bytes into an empty socket buffer: written here, before the writer
            registered.sendNow(WELCOME, welcome);
            links[peer] = registered;
            joined++;
            startThread("write-r" + peer, registered::writeLoop);
            lock.notifyAll();
            return null;
        }
    }

    private void joinAsMember() {
        PeerLink link = MemberJoin.join(config, liveness::writeFailed);
        links[0] = link;
        liveness.tickedNow(); // the heartbeat thread starts now: the join was no pause
        synchronized (lock) {
            complete = true;
            liveness.heardFrom(0, System.nanoTime());
        }
        startThread("write-root", link::writeLoop);
        startThread("read-root", () -> readLoop(0, link));
        startThread("heartbeat", liveness::heartbeatLoop);
    }

    /** The largest frame the root may send a rank: a full all-gather result (or a longer failure reason). */
    private int replyLimit() {
        long result = 1L + BootstrapFrameDescriptor.RESULT_PARTS_OFFSET
                + (long) size * (BootstrapFrameDescriptor.RESULT_PART_LENGTH_BYTES + config.maxMessageBytes())
                + BootstrapFrameDescriptor.MAC_BYTES;
        return (int) Math.min(Integer.MAX_VALUE, Math.max(result, BootstrapFrameDescriptor.REASON_FRAME_LIMIT_BYTES));
    }

    /** The largest frame a rank may send the root: a part of the largest all-gather (or a longer abort reason). */
    private int contributionLimit() {
        long part = 1L + BootstrapFrameDescriptor.COLLECTIVE_PART_OFFSET + config.maxMessageBytes()
                + BootstrapFrameDescriptor.MAC_BYTES;
        return (int) Math.min(Integer.MAX_VALUE, Math.max(part, BootstrapFrameDescriptor.REASON_FRAME_LIMIT_BYTES));
    }

    // ---- the failure every call throws ------------------------------------------------------------------------

    RuntimeException rethrown(Throwable cause) {
        // a fresh exception so that the stack shows the caller's collective, the cause the first sighting
        if (cause instanceof PeerFailedException p) {
            PeerFailedException e = new PeerFailedException(p.deadRank(), p.getMessage());
            e.initCause(p);
            return e;
        }
        return new BootstrapException(cause.getMessage(), cause);
    }

    void throwIfFailed() {
        BootstrapException f = failure;
        if (f != null) {
            throw rethrown(f);
        }
    }

    // ---- connections, the frame switch and failures -----------------------------------------------------------

    /**
     * One connection's reader: each frame through the frame switch. A frame that breaks the protocol fails its
     * sender at once, named; a frame this process cannot hold (out of memory) fails the world, naming this rank.
     */
    private void readLoop(int peer, PeerLink link) {
        int limit = rank == 0 ? contributionLimit() : replyLimit();
        try {
            while (onFrame(peer, link.in, limit)) {
                // the next frame
            }
        } catch (FrameException e) { // a malformed frame, or one whose MAC is wrong (IntegrityException)
            if (!closing) {
                liveness.peerBrokeProtocol(peer, "sent " + e.getMessage());
            }
        } catch (IOException e) {
            if (!closing) {
                liveness.connectionLost(peer, "connection lost: " + e.getMessage());
            }
        } catch (OutOfMemoryError e) {
            failWorld(new BootstrapException("rank " + rank + " ran out of memory reading a frame from rank " + peer
                    + " (" + e.getMessage() + "): give this JVM more heap (-Xmx), or all-gather less"));
            link.close();
        } catch (RuntimeException e) {
            if (!closing) {
                liveness.peerBrokeProtocol(peer, "sent a frame this rank cannot read (" + e + "): not the same gda4j"
                        + " version?");
            }
        }
    }

    /**
     * Reads one frame from {@code in} and acts on it once its MAC is checked; false when the connection is finished
     * with.
     */
    private boolean onFrame(int peer, FrameReader in, int limit) throws IOException {
        byte type = in.begin(limit);
        switch (type) {
            case HEARTBEAT:
                in.end();
                return true;
            case GOODBYE:
                in.end();
                boolean waitedFor;
                synchronized (lock) {
                    liveness.recordLeft(peer); // left, not dead: no listener call, no later death notice
                    collectives.recordLeft(peer);
                    waitedFor = rank != 0 || collectives.roundWaitsFor(peer);
                }
                // At the root, a rank that leaves right after the last collective must not fail that collective
                // for the others: its RESULT frames may still be on their way (sent by another thread), and a FAIL
                // now could overtake them. Only a round that still waits for the leaver fails now; a later one fails
                // when it starts (contribute). A member hears the root's goodbye after every RESULT (one connection).
                if (!closing && waitedFor) {
                    failWorld(collectives.leftWorld(peer));
                }
                return false;
            case COLLECTIVE:
                if (rank != 0) {
                    break;
                }
                long seq = in.readLong();
                byte kind = in.readByte();
                byte[] part = in.readRest(); // at most maxMessageBytes: the frame limit is exact
                in.end();
                return brokeProtocol(peer, collectives.onContribution(peer, seq, kind, part));
            case RESULT:
                if (rank == 0) {
                    break;
                }
                long rseq = in.readLong();
                int count = in.readInt();
                if (count != size) {
                    throw in.malformed("a result of " + count + " parts in a world of " + size);
                }
                byte[][] parts = new byte[count][];
                for (int r = 0; r < count; r++) {
                    int n = in.readInt();
                    if (n < 0 || n > config.maxMessageBytes()) {
                        throw in.malformed("rank " + r + "'s part of " + n + " bytes (limit "
                                + config.maxMessageBytes() + ")");
                    }
                    parts[r] = in.readBytes(n);
                }
                in.end();
                return brokeProtocol(peer, collectives.onResult(rseq, parts));
            case ABORT:
                int origin = in.readInt();
                String reason = new String(in.readRest(), StandardCharsets.UTF_8);
                in.end();
                if (rank == 0 ? origin != peer : origin < 0 || origin >= size || origin == rank) {
                    return brokeProtocol(peer, "sent an abort of rank " + origin + (rank == 0
                            ? ": a rank announces only its own" : ", not another rank of a world of " + size));
                }
                if (rank == 0) {
                    relayAbort(origin, BootstrapFrameDescriptor.abort(origin, reason));
                }
                try {
                    listener.onPeerAbort(origin, reason);
                } catch (RuntimeException ignored) {
                    // a listener's bug must not stop this connection's reader
                }
                return true;
            case PEER_FAILED:
                if (rank == 0) {
                    break;
                }
                int dead = in.readInt();
                String seen = new String(in.readRest(), StandardCharsets.UTF_8);
                in.end();
                if (dead < 0 || dead >= size) {
                    return brokeProtocol(peer, "sent the failure of rank " + dead + ", not a rank of a world of "
                            + size);
                }
                liveness.peerDied(dead, dead != rank ? seen + ", as the root saw it"
                        : "the root declared this rank dead (" + seen + ")" + (seen.startsWith("silent for")
                        ? ": was this process stopped or starved for longer than dead-after?" : ""));
                return true;
            case FAIL:
                if (rank == 0) {
                    break;
                }
                String text = new String(in.readRest(), StandardCharsets.UTF_8);
                in.end();
                failWorld(new BootstrapException(text));
                return true;
            default:
                break;
        }
        throw new FrameException("an unexpected frame of type " + type + ": not the same gda4j version?");
    }

    /** True (read on) when {@code why} is null, else fails {@code peer} for breaking the protocol with it. */
    private boolean brokeProtocol(int peer, String why) {
        if (why == null) {
            return true;
        }
        if (!closing) {
            liveness.peerBrokeProtocol(peer, why);
        }
        return false;
    }

    /** Ends the world with {@code e}; the root tells every rank. */
    void failWorld(BootstrapException e) {
        boolean first;
        synchronized (lock) {
            first = failure == null;
            if (first) {
                failure = e;
            }
        }
        // The ranks are told before this process's own waiting calls fail: a caller woken by the failure may close
        // the bootstrap at once, and its GOODBYE must not reach a rank ahead of the FAIL that explains it.
        if (first && rank == 0) {
            byte[] text = BootstrapFrameDescriptor.text(e.getMessage());
            for (int r = 1; r < size; r++) {
                PeerLink l = links[r];
                if (l != null) {
                    l.send(FAIL, text);
                }
            }
        }
        failLocally(e);
    }

    boolean failLocally(BootstrapException e) {
        List<CompletableFuture<byte[][]>> waiting = new ArrayList<>();
        boolean first;
        synchronized (lock) {
            first = failure == null;
            if (first) {
                failure = e;
            }
            collectives.drainWaiting(waiting);
            lock.notifyAll();
        }
        for (CompletableFuture<byte[][]> f : waiting) {
            f.completeExceptionally(failure);
        }
        return first;
    }

    /**
     * Says goodbye to the live peers and closes every connection; does not wait for dead peers beyond a moment for
     * the verdict they were told.
     */
    @Override
    public void close() {
        synchronized (lock) {
            if (closing) {
                return;
            }
            closing = true;
            lock.notifyAll();
        }
        for (int r = 0; r < size; r++) {
            PeerLink l = links[r];
            boolean dead;
            synchronized (lock) {
                dead = liveness.deadUnderLock(r);
            }
            if (l != null && !dead) {
                l.send(GOODBYE);
            }
        }
        // What is queued (the last results, a FAIL, the goodbyes) goes out first, but a peer that stopped reading
        // holds close() no longer than it would take to declare it dead; a dead peer's verdict (a few bytes, if it
        // was told) gets a moment.
        long now = System.nanoTime();
        long flushDeadline = now + TimeUnit.MILLISECONDS.toNanos(config.deadAfterMillis());
        long verdictDeadline = now + TimeUnit.MILLISECONDS.toNanos(VERDICT_FLUSH_MILLIS);
        for (PeerLink l : links) {
            if (l != null) {
                l.awaitDrained(liveness.dead(l.peer) ? verdictDeadline : flushDeadline);
                l.close();
            }
        }
        if (gate != null) {
            gate.close();
        }
        if (server != null) {
            PeerLink.closeQuietly(server); // the port is released either way
        }
        List<Thread> started;
        synchronized (threads) {
            started = new ArrayList<>(threads);
        }
        for (Thread t : started) {
            if (t != Thread.currentThread()) {
                try {
                    t.join(1_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private void startThread(String name, Runnable body) {
        Thread t = new Thread(body, "gda4j-bootstrap-r" + rank + "-" + name);
        t.setDaemon(true); // a bootstrap never keeps a finished JVM alive
        synchronized (threads) {
            threads.add(t);
        }
        t.start();
    }

    private void waitOn(long nanos) {
        try {
            TimeUnit.NANOSECONDS.timedWait(lock, nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BootstrapException("rank " + rank + ": interrupted while joining", e);
        }
    }
}
