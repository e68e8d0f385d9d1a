package io.gda4j.bootstrap;

import static io.gda4j.bootstrap.BootstrapFrameDescriptor.CHALLENGE;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.HELLO;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.HELLO_BYTES;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.HELLO_LIMIT_BYTES;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.HELLO_MAGIC_OFFSET;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.HELLO_NONCE_OFFSET;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.HELLO_RANK_OFFSET;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.HELLO_VERSION_OFFSET;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.HELLO_WORLD_SIZE_OFFSET;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.PROOF;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.REFUSE;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.SEALED_REFUSE;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.MessageDigest;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The root's door: one thread and a selector hold every connection that has not yet proven the job token, so a
 * pending connection costs a descriptor and a small buffer, no thread. Its first frame must come within
 * {@link #FIRST_FRAME_MILLIS} and the whole handshake within {@link BootstrapConfig#helloTimeoutMillis()}. At most
 * {@link BootstrapConfig#maxPendingHellos()} are held; a new connection beyond them evicts one, from the source
 * holding the most, the one that has got least far, oldest first: a real rank answers its challenge within a round
 * trip, so connections that only sit there go first, and one local process cannot keep the ranks of its host out.
 *
 * <p>Every refusal after a proof (a wrong token, or a right one whose hello does not fit: another world size, a rank
 * already joined, the world complete) is sealed with the handshake's refusal key and has one length, so the answer
 * does not tell a stranger whether its token was right, during the join or after it. Each such refusal slows its
 * source down: the proofs it sends next are checked only after a back-off ({@link #PENALTY_FIRST_MILLIS}, doubling to
 * {@link #PENALTY_MAX_MILLIS}), all at once, so guessing the token online gets slower and slower while the ranks of
 * that host still get in. Accepting survives transient errors (a full descriptor table): it pauses, sheds an unproven
 * connection, and goes on; the join timeout names the error.
 */
final class RootGate implements AutoCloseable {
    /** Takes a proven rank into the world. */
    interface Registrar {
        /**
         * Takes proven rank {@code peer} on {@code socket} (blocking now): sends WELCOME with {@code welcome} and
         * starts its link with the session keys; or says why not (already joined, the world complete), sending
         * nothing.
         *
         * @return null when registered, else the reason to refuse
         * @throws IOException the connection failed while being welcomed
         */
        String register(int peer, Socket socket, byte[] welcome, byte[] rankKey, byte[] rootKey) throws IOException;
    }

    /** How long a connection may take to send its whole first frame (a hello is one small segment). */
    static final long FIRST_FRAME_MILLIS = 1_000;
    /** The first back-off of a source after a refusal that followed a proof; each further one doubles it. */
    static final long PENALTY_FIRST_MILLIS = 50;
    static final long PENALTY_MAX_MILLIS = 1_000;
    /** A source without such a refusal for this long starts again at the first step. */
    static final long PENALTY_FORGET_MILLIS = 10_000;
    /** After an accept fails (no descriptor free), accepting pauses this long. */
    static final long ACCEPT_RETRY_MILLIS = 100;
    /** Accepted in one turn at most, so that a flood of connections does not hold up the reading of hellos. */
    private static final int ACCEPTS_PER_TURN = 16;
    private static final long MAX_SELECT_MILLIS = 100;
    /** Sources remembered (for their back-off) at most; the quiet ones are forgotten first. */
    private static final int MAX_SOURCES = 4096;
    /** Refused hellos a join timeout's message names at most (the latest). */
    private static final int MAX_REFUSALS_NAMED = 4;

    /** How far a pending connection has come: eviction takes the least advanced first. */
    private static final int FRESH = 0;
    private static final int HELLO_PART = 1;
    private static final int CHALLENGED = 2;
    private static final int PROVED = 3;

    private final BootstrapConfig config;
    private final ServerSocketChannel server;
    private final Registrar registrar;
    private final Selector selector;
    private final SelectionKey serverKey;
    /** Connections not yet proven, oldest first (the gate thread's alone). */
    private final LinkedHashSet<Pending> pending = new LinkedHashSet<>();
    /** Sources with pending connections or a back-off to remember, least recently refused first. */
    private final Map<Object, Source> sources = new LinkedHashMap<>();
    /** The latest hellos of gda4j processes refused, for the join timeout's message (under itself). */
    private final ArrayDeque<String> refusedHellos = new ArrayDeque<>();
    private volatile String lastAcceptError;
    private volatile int acceptErrors;
    private volatile int evicted;
    private volatile int timedOut;
    private long resumeAcceptNanos;
    private boolean acceptPaused;
    private volatile boolean closed;

    /** One connection before its proof is checked. */
    private static final class Pending {
        final SocketChannel channel;
        final SelectionKey key;
        final Source source;
        final String address;
        final long acceptedNanos;
        /** The first frame, then the second, as they come (a handshake frame is at most HELLO_LIMIT_BYTES). */
        final ByteBuffer in = ByteBuffer.allocate(4 + HELLO_LIMIT_BYTES);
        int stage = FRESH;
        byte[] hello;
        byte[] rootNonce;
        /** The PROOF's body, or null when the second frame was something else. */
        byte[] proof;

        Pending(SocketChannel channel, SelectionKey key, Source source, String address, long acceptedNanos) {
            this.channel = channel;
            this.key = key;
            this.source = source;
            this.address = address;
            this.acceptedNanos = acceptedNanos;
        }
    }

    /** An address (an IPv6 /64, all of loopback) and its back-off. */
    private static final class Source {
        final Object key;
        int pending;
        int failures;
        long lastFailureNanos;
        long penaltyUntilNanos;

        Source(Object key) {
            this.key = key;
        }
    }

    RootGate(BootstrapConfig config, ServerSocketChannel server, Registrar registrar) throws IOException {
        this.config = config;
        this.server = server;
        this.registrar = registrar;
        // The JDK sets up its closing of sockets on the first close, which takes a descriptor and, failing under
        // EMFILE, fails for good: set it up now, while descriptors are free.
        SocketChannel.open().close();
        this.selector = Selector.open();
        server.configureBlocking(false);
        this.serverKey = server.register(selector, SelectionKey.OP_ACCEPT);
    }

    /** The gate thread: until {@link #close}. */
    void run() {
        try {
            while (!closed) {
                try {
                    turn();
                } catch (RuntimeException e) {
                    // a bug must not close the door for good: remember it for the join timeout, and go on
                    acceptErrors++;
                    lastAcceptError = String.valueOf(e);
                    sleep(ACCEPT_RETRY_MILLIS);
                }
            }
        } catch (IOException | ClosedSelectorException e) {
            // closed under us (close()), or the selector failed: the join timeout will say no rank came
            lastAcceptError = closed ? lastAcceptError : "the selector failed: " + e.getMessage();
        } finally {
            for (Pending p : new ArrayList<>(pending)) {
                drop(p);
            }
            PeerLink.closeQuietly(selector);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** One turn: what is readable, the deadlines, the proofs due, then new connections. */
    private void turn() throws IOException {
        selector.select(selectMillis(System.nanoTime()));
        boolean acceptable = false;
        Iterator<SelectionKey> it = selector.selectedKeys().iterator();
        while (it.hasNext()) {
            SelectionKey k = it.next();
            it.remove();
            if (k == serverKey) {
                acceptable = k.isValid() && k.isAcceptable();
            } else if (k.isValid() && k.isReadable()) {
                read((Pending) k.attachment());
            }
        }
        long now = System.nanoTime();
        expire(now);
        evaluateProofs(now);
        if (acceptPaused && now - resumeAcceptNanos >= 0) {
            acceptPaused = false;
            serverKey.interestOps(SelectionKey.OP_ACCEPT);
            acceptable = true;
        }
        if (acceptable && !acceptPaused) {
            accept(now);
        }
    }

    /** How long the selector may sleep: until the next deadline, back-off end or accept retry, at most 100 ms. */
    private long selectMillis(long now) {
        long next = now + TimeUnit.MILLISECONDS.toNanos(MAX_SELECT_MILLIS);
        if (acceptPaused && resumeAcceptNanos - next < 0) {
            next = resumeAcceptNanos;
        }
        for (Pending p : pending) {
            long at = deadline(p);
            if (p.stage == PROVED && p.source.penaltyUntilNanos - at < 0) {
                at = Math.max(p.source.penaltyUntilNanos, now);
            }
            if (at - next < 0) {
                next = at;
            }
        }
        return Math.max(1, TimeUnit.NANOSECONDS.toMillis(next - now + 999_999));
    }

    private void accept(long now) {
        for (int i = 0; i < ACCEPTS_PER_TURN; i++) {
            SocketChannel c;
            try {
                c = server.accept();
            } catch (IOException e) {
                if (!server.isOpen()) {
                    return;
                }
                acceptFailed(e, now);
                return;
            }
            if (c == null) {
                return;
            }
            admit(c, now);
        }
    }

    /** An accept failed (EMFILE, ENFILE, ENOBUFS): pause, give a descriptor back, and try again. */
    private void acceptFailed(IOException e, long now) {
        acceptErrors++;
        lastAcceptError = String.valueOf(e.getMessage());
        acceptPaused = true;
        resumeAcceptNanos = now + TimeUnit.MILLISECONDS.toNanos(ACCEPT_RETRY_MILLIS);
        serverKey.interestOps(0);
        Pending victim = evictionVictim();
        if (victim != null) {
            evicted++;
            drop(victim);
        }
    }

    private void admit(SocketChannel c, long now) {
        InetAddress address;
        try {
            c.configureBlocking(false);
            c.setOption(StandardSocketOptions.TCP_NODELAY, true);
            address = ((InetSocketAddress) c.getRemoteAddress()).getAddress();
        } catch (IOException e) {
            PeerLink.closeQuietly(c);
            return;
        }
        if (pending.size() >= config.maxPendingHellos()) {
            Pending victim = evictionVictim();
            if (victim != null) {
                evicted++;
                drop(victim);
            }
        }
        Source source = sources.computeIfAbsent(sourceKey(address), Source::new);
        SelectionKey key;
        try {
            key = c.register(selector, SelectionKey.OP_READ);
        } catch (IOException e) {
            PeerLink.closeQuietly(c);
            return;
        }
        Pending p = new Pending(c, key, source, address.getHostAddress(), now);
        key.attach(p);
        source.pending++;
        pending.add(p);
        forgetQuietSources(now);
        read(p); // a rank's hello follows its connect at once: challenged now, it is no longer first to be evicted
    }

    /** The connection to evict for a newer one: of the source holding the most, the least advanced, oldest first. */
    private Pending evictionVictim() {
        Pending victim = null;
        for (Pending p : pending) { // oldest first: a later one wins only by being strictly worse to keep
            if (victim == null || p.source.pending > victim.source.pending
                    || p.source.pending == victim.source.pending && p.stage < victim.stage) {
                victim = p;
            }
        }
        return victim;
    }

    /** One address's share: an IPv6 /64 is one host's; every loopback address is this host. */
    static Object sourceKey(InetAddress a) {
        if (a.isLoopbackAddress()) {
            return "loopback";
        }
        byte[] b = a.getAddress();
        return b.length == 16 ? "ipv6 " + HexFormat.of().formatHex(b, 0, 8) : a;
    }

    private void forgetQuietSources(long now) {
        if (sources.size() <= MAX_SOURCES) {
            return;
        }
        long forget = TimeUnit.MILLISECONDS.toNanos(PENALTY_FORGET_MILLIS);
        sources.values().removeIf(s -> s.pending == 0 && now - s.lastFailureNanos > forget);
        Iterator<Source> it = sources.values().iterator();
        while (sources.size() > MAX_SOURCES && it.hasNext()) {
            if (it.next().pending == 0) {
                it.remove(); // a flood of addresses: the least recently refused back-offs go
            }
        }
    }

    private void read(Pending p) {
        try {
            int n = p.channel.read(p.in);
            if (n < 0) {
                drop(p); // gone: nobody to tell
                return;
            }
            if (p.stage == FRESH && p.in.position() > 0) {
                p.stage = HELLO_PART;
            }
            while (pending.contains(p) && p.stage != PROVED && p.in.position() >= 4) {
                int length = p.in.getInt(0);
                if (length < 1 || length > HELLO_LIMIT_BYTES) {
                    refuse(p, "a frame of " + Integer.toUnsignedString(length) + " bytes (limit " + HELLO_LIMIT_BYTES
                            + "): not a gda4j bootstrap peer, or a message over the limit");
                    return;
                }
                if (p.in.position() < 4 + length) {
                    return;
                }
                byte type = p.in.get(4);
                byte[] body = new byte[length - 1];
                p.in.get(5, body);
                p.in.flip().position(4 + length);
                p.in.compact();
                onFrame(p, type, body);
            }
        } catch (IOException | RuntimeException e) {
            drop(p); // a stranger's bytes must never leave a socket open or a stack trace
        }
    }

    private void onFrame(Pending p, byte type, byte[] body) throws IOException {
        if (p.stage < CHALLENGED) {
            String why = checkHello(type, body);
            if (why != null) {
                if (type == HELLO && body.length >= HELLO_VERSION_OFFSET
                        && ByteBuffer.wrap(body).getInt(HELLO_MAGIC_OFFSET) == BootstrapFrameDescriptor.MAGIC) {
                    noteRefusal(rankOf(body) + " from " + p.address + ": " + why);
                }
                refuse(p, why);
                return;
            }
            // the token is checked before anything about the world is said: a stranger learns nothing
            p.hello = body;
            p.rootNonce = BootstrapFrameDescriptor.nonce();
            if (!write(p.channel, frame(CHALLENGE, p.rootNonce))) {
                drop(p);
                return;
            }
            p.stage = CHALLENGED;
        } else {
            p.proof = type == PROOF ? body : null;
            p.stage = PROVED;
            p.key.interestOps(0); // nothing more comes before the answer; more would be read by the rank's link
        }
    }

    /**
     * Checks the proofs that have come, those of a source in back-off only once it ends (then all of them at once),
     * and welcomes or refuses each; a source refused here backs off further.
     */
    private void evaluateProofs(long now) {
        List<Pending> proved = new ArrayList<>();
        for (Pending p : pending) {
            if (p.stage == PROVED && now - p.source.penaltyUntilNanos >= 0) {
                proved.add(p);
            }
        }
        List<Source> refused = new ArrayList<>();
        for (Pending p : proved) {
            try {
                if (evaluate(p) && !refused.contains(p.source)) {
                    refused.add(p.source);
                }
            } catch (IOException | RuntimeException e) {
                drop(p);
            }
        }
        for (Source s : refused) {
            if (now - s.lastFailureNanos > TimeUnit.MILLISECONDS.toNanos(PENALTY_FORGET_MILLIS)) {
                s.failures = 0;
            }
            s.failures++;
            s.lastFailureNanos = now;
            long penalty = PENALTY_FIRST_MILLIS << Math.min(s.failures - 1, 20);
            s.penaltyUntilNanos = now + TimeUnit.MILLISECONDS.toNanos(Math.min(PENALTY_MAX_MILLIS, penalty));
            sources.remove(s.key);
            sources.put(s.key, s); // least recently refused first
        }
    }

    /** Welcomes {@code p}'s rank or refuses it, sealed; true when refused. */
    private boolean evaluate(Pending p) throws IOException {
        String token = config.jobToken();
        byte[] expected = BootstrapFrameDescriptor.proof(token, BootstrapFrameDescriptor.RANK_PROOF_LABEL, p.hello,
                p.rootNonce);
        boolean right = p.proof != null && MessageDigest.isEqual(p.proof, expected);
        String why = right ? checkMembership(p.hello) : "wrong job token: this process belongs to another job (check "
                + LaunchEnvironment.GDA4J_JOB_TOKEN + " or the launcher's job id)";
        if (why == null) {
            // a blocking socket from here on, for the rank's link
            release(p);
            p.key.cancel();
            selector.selectNow();
            p.channel.configureBlocking(true);
            try {
                why = registrar.register(ByteBuffer.wrap(p.hello).getInt(HELLO_RANK_OFFSET), p.channel.socket(),
                        BootstrapFrameDescriptor.proof(token, BootstrapFrameDescriptor.ROOT_PROOF_LABEL, p.hello,
                                p.rootNonce),
                        BootstrapFrameDescriptor.proof(token, BootstrapFrameDescriptor.RANK_KEY_LABEL, p.hello,
                                p.rootNonce),
                        BootstrapFrameDescriptor.proof(token, BootstrapFrameDescriptor.ROOT_KEY_LABEL, p.hello,
                                p.rootNonce));
            } catch (IOException e) {
                PeerLink.closeQuietly(p.channel);
                return false;
            }
            if (why == null) {
                return false;
            }
            refuseSealed(p, why);
            PeerLink.closeQuietly(p.channel);
            return true;
        }
        refuseSealed(p, why);
        drop(p);
        return true;
    }

    /** Notes the refusal and sends it sealed with the handshake's refusal key. */
    private void refuseSealed(Pending p, String why) {
        noteRefusal(rankOf(p.hello) + " from " + p.address + ": " + why);
        byte[] refusalKey = BootstrapFrameDescriptor.proof(config.jobToken(),
                BootstrapFrameDescriptor.REFUSAL_KEY_LABEL, p.hello, p.rootNonce);
        write(p.channel, frame(SEALED_REFUSE, BootstrapFrameDescriptor.sealRefusal(refusalKey, why)));
    }

    /**
     * Closes connections past their deadline, the first frame's or the whole handshake's, without an answer: a rank
     * that was only slow (or kept waiting by its address's back-off) knocks again.
     */
    private void expire(long now) {
        List<Pending> late = new ArrayList<>();
        for (Pending p : pending) {
            if (now - deadline(p) >= 0) {
                late.add(p);
            }
        }
        for (Pending p : late) {
            timedOut++;
            drop(p);
        }
    }

    private long firstFrameMillis() {
        return Math.min(FIRST_FRAME_MILLIS, config.helloTimeoutMillis());
    }

    private long deadline(Pending p) {
        long millis = p.stage < CHALLENGED ? firstFrameMillis() : config.helloTimeoutMillis();
        return p.acceptedNanos + TimeUnit.MILLISECONDS.toNanos(millis);
    }

    /** "rank r", or what the hello claimed when it is too short to say. */
    private static String rankOf(byte[] hello) {
        return hello.length >= HELLO_RANK_OFFSET + 4 ? "rank " + ByteBuffer.wrap(hello).getInt(HELLO_RANK_OFFSET)
                : "a hello";
    }

    /** Remembers a gda4j process's refused hello (the latest few), so the join timeout can name it. */
    private void noteRefusal(String what) {
        synchronized (refusedHellos) {
            if (refusedHellos.size() == MAX_REFUSALS_NAMED) {
                refusedHellos.removeFirst();
            }
            refusedHellos.addLast(what);
        }
    }

    /** Null when the first frame is a gda4j hello of this protocol version, else why not. */
    private static String checkHello(byte type, byte[] body) {
        if (type != HELLO || body.length < HELLO_NONCE_OFFSET) {
            return "the first frame is not a gda4j hello";
        }
        ByteBuffer b = ByteBuffer.wrap(body);
        int magic = b.getInt(HELLO_MAGIC_OFFSET);
        short version = b.getShort(HELLO_VERSION_OFFSET);
        if (magic != BootstrapFrameDescriptor.MAGIC) {
            return "not a gda4j bootstrap hello (magic " + Integer.toHexString(magic) + ")";
        }
        if (version != BootstrapFrameDescriptor.VERSION) {
            return "bootstrap protocol version " + version + ", the root speaks " + BootstrapFrameDescriptor.VERSION
                    + ": use the same gda4j in every process";
        }
        if (body.length != HELLO_BYTES) {
            return "a hello of " + body.length + " bytes: version " + version + " has " + HELLO_BYTES;
        }
        return null;
    }

    /** Null when a proven rank's hello fits this world, else why not. */
    private String checkMembership(byte[] hello) {
        ByteBuffer b = ByteBuffer.wrap(hello);
        int peer = b.getInt(HELLO_RANK_OFFSET);
        int peerSize = b.getInt(HELLO_WORLD_SIZE_OFFSET);
        int size = config.worldSize();
        if (peerSize != size) {
            return "world size " + peerSize + " but the root's world has " + size + " ranks";
        }
        if (peer < 1 || peer >= size) {
            return "rank " + peer + " is not a non-root rank of a world of " + size;
        }
        return null;
    }

    private static ByteBuffer frame(byte type, byte[] body) {
        ByteBuffer b = ByteBuffer.allocate(BootstrapFrameDescriptor.HEADER_BYTES + body.length);
        b.put(BootstrapFrameDescriptor.header(1 + body.length, type)).put(body).flip();
        return b;
    }

    /** Writes a few hundred bytes at most; false when they did not all fit (a connection that cannot take them). */
    private static boolean write(SocketChannel c, ByteBuffer b) {
        try {
            c.write(b);
            return !b.hasRemaining();
        } catch (IOException e) {
            return false;
        }
    }

    /** Refuses a connection before its proof, with a reason that says nothing about the token, and closes it. */
    private void refuse(Pending p, String why) {
        write(p.channel, frame(REFUSE, BootstrapFrameDescriptor.text(why)));
        drop(p);
    }

    private void drop(Pending p) {
        release(p);
        p.key.cancel();
        PeerLink.closeQuietly(p.channel);
    }

    private void release(Pending p) {
        if (pending.remove(p)) {
            p.source.pending--;
        }
    }

    /** " Refused meanwhile: ..." naming the latest refused gda4j hellos, and what went wrong accepting, or empty. */
    String refusalsNamed() {
        StringBuilder s = new StringBuilder();
        synchronized (refusedHellos) {
            if (!refusedHellos.isEmpty()) {
                s.append(" Refused meanwhile: ").append(String.join("; ", refusedHellos)).append('.');
            }
        }
        int errors = acceptErrors;
        if (errors > 0) {
            s.append(" Accepting a connection failed ").append(errors).append(" time(s) (latest: ")
                    .append(lastAcceptError).append("; the root retried every ").append(ACCEPT_RETRY_MILLIS)
                    .append(" ms): is this process out of file descriptors (ulimit -n)?");
        }
        int late = timedOut;
        if (late > 0) {
            s.append(' ').append(late).append(" connection(s) did not finish the handshake in time (")
                    .append(firstFrameMillis()).append(" ms for the hello, ").append(config.helloTimeoutMillis())
                    .append(" ms in all).");
        }
        int gone = evicted;
        if (gone > 0) {
            s.append(' ').append(gone).append(" unproven connection(s) were dropped for newer ones (")
                    .append(config.maxPendingHellos()).append(" handshakes at most).");
        }
        return s.toString();
    }

    /** Stops the gate thread, which closes every pending connection (the caller closes the server socket). */
    @Override
    public void close() {
        closed = true;
        selector.wakeup();
    }
}
