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

import io.gda4j.bootstrap.BootstrapFrameDescriptor.Frame;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The root's door: accepts connections, admits at most {@link BootstrapConfig#maxPendingHellos()} handshakes at once
 * ({@link BootstrapConfig#maxPendingHellosPerSource()} from one address), closes each at one deadline for the whole
 * handshake, checks the hello and the rank's proof of the token, and hands a proven rank to the {@link Registrar}.
 * Everything else is refused on that connection alone, with the reason.
 */
final class RootGate implements AutoCloseable {
    /** Takes a proven rank into the world, or says why not. */
    interface Registrar {
        /**
         * @param welcome the WELCOME body (the root's proof) to send when registered
         * @param settled set by whichever comes first, the registration or the hello deadline
         * @return null when registered (or closed by the deadline), else the reason to refuse
         */
        String register(int peer, PeerLink handshake, byte[] welcome, AtomicBoolean settled) throws IOException;
    }

    /** Refused hellos a join timeout's message names at most (the latest). */
    private static final int MAX_REFUSALS_NAMED = 4;

    private final BootstrapConfig config;
    private final ServerSocket server;
    private final Registrar registrar;
    /** Handshakes in progress, in all and by source address (under the map's lock). */
    private final Map<InetAddress, Integer> pendingHellosBySource = new HashMap<>();
    private int pendingHellos;
    /** Closes each handshake's socket at its deadline, however slowly its bytes come. */
    private final ScheduledExecutorService helloDeadlines;
    /** The latest hellos of gda4j processes refused, for the join timeout's message (under itself). */
    private final ArrayDeque<String> refusedHellos = new ArrayDeque<>();
    private volatile boolean closed;

    RootGate(BootstrapConfig config, ServerSocket server, Registrar registrar) {
        this.config = config;
        this.server = server;
        this.registrar = registrar;
        this.helloDeadlines = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "gda4j-bootstrap-r0-hello-deadlines");
            t.setDaemon(true);
            return t;
        });
    }

    /** The accept thread: each admitted connection's handshake runs on a thread of its own. */
    void acceptLoop() {
        while (!closed) {
            Socket s;
            try {
                s = server.accept();
            } catch (IOException e) {
                return; // closed
            }
            InetAddress source = s.getInetAddress();
            if (!admitHello(source)) {
                PeerLink.closeQuietly(s); // a member dropped here retries until its join timeout
                continue;
            }
            // not tracked for close(): a hello thread ends by itself at the hello deadline, which closes its socket
            Thread hello = new Thread(() -> {
                AtomicBoolean settled = new AtomicBoolean();
                ScheduledFuture<?> deadline = null;
                try {
                    deadline = helloDeadlines.schedule(() -> {
                        if (settled.compareAndSet(false, true)) {
                            PeerLink.closeQuietly(s);
                        }
                    }, config.helloTimeoutMillis(), TimeUnit.MILLISECONDS);
                    handshake(s, settled);
                } catch (RuntimeException e) {
                    PeerLink.closeQuietly(s); // a stranger's bytes must never leave a socket open or a stack trace
                } finally {
                    if (deadline != null) {
                        deadline.cancel(false);
                    }
                    releaseHello(source);
                }
            }, "gda4j-bootstrap-r0-hello");
            hello.setDaemon(true);
            hello.start();
        }
    }

    /** Takes a handshake slot for {@code source}, or says there is none (total or per-source limit). */
    private boolean admitHello(InetAddress source) {
        synchronized (pendingHellosBySource) {
            int fromSource = pendingHellosBySource.getOrDefault(source, 0);
            if (pendingHellos >= config.maxPendingHellos() || fromSource >= config.maxPendingHellosPerSource()) {
                return false;
            }
            pendingHellos++;
            pendingHellosBySource.put(source, fromSource + 1);
            return true;
        }
    }

    private void releaseHello(InetAddress source) {
        synchronized (pendingHellosBySource) {
            pendingHellos--;
            pendingHellosBySource.computeIfPresent(source, (k, n) -> n == 1 ? null : n - 1);
        }
    }

    /**
     * One connection's hello at the root: registered, or refused with a reason and closed. {@code settled} is set
     * by whichever comes first, the registration or the hello deadline (which closes the socket).
     */
    private void handshake(Socket s, AtomicBoolean settled) {
        PeerLink link;
        try {
            s.setTcpNoDelay(true);
            s.setSoTimeout((int) config.helloTimeoutMillis());
            link = new PeerLink(-1, s, (peer, why) -> { }); // no writer: the handshake writes itself
        } catch (IOException e) {
            PeerLink.closeQuietly(s);
            return;
        }
        try {
            Frame f = BootstrapFrameDescriptor.read(link.in, HELLO_LIMIT_BYTES);
            String why = checkHello(f);
            byte[] rootNonce = BootstrapFrameDescriptor.nonce();
            if (why == null) {
                // the token is checked before anything about the world is said: a stranger learns nothing
                link.sendNow(CHALLENGE, rootNonce);
                Frame proof = BootstrapFrameDescriptor.read(link.in, HELLO_LIMIT_BYTES);
                byte[] expected = BootstrapFrameDescriptor.proof(config.jobToken(),
                        BootstrapFrameDescriptor.RANK_PROOF_LABEL, f.body(), rootNonce);
                if (proof.type() != PROOF || !MessageDigest.isEqual(proof.body(), expected)) {
                    why = "wrong job token: this process belongs to another job (check "
                            + LaunchEnvironment.GDA4J_JOB_TOKEN + " or the launcher's job id)";
                } else {
                    why = checkMembership(f);
                }
            }
            if (why != null && f.type() == HELLO && f.body().length >= HELLO_WORLD_SIZE_OFFSET
                    && f.buffer().getInt(HELLO_MAGIC_OFFSET) == BootstrapFrameDescriptor.MAGIC) {
                noteRefusal("rank " + f.buffer().getInt(HELLO_RANK_OFFSET) + " from "
                        + s.getInetAddress().getHostAddress() + ": " + why);
            }
            if (why == null) {
                why = registrar.register(f.buffer().getInt(HELLO_RANK_OFFSET), link,
                        BootstrapFrameDescriptor.proof(config.jobToken(), BootstrapFrameDescriptor.ROOT_PROOF_LABEL,
                                f.body(), rootNonce), settled);
                if (why == null) {
                    return; // registered, or closed by the hello deadline
                }
            }
            refuse(link, why);
        } catch (SocketTimeoutException e) {
            refuse(link, "no hello within " + config.helloTimeoutMillis() + " ms");
        } catch (IOException e) {
            refuse(link, String.valueOf(e.getMessage()));
        }
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

    /** Null when the hello is a gda4j hello of this protocol version, else why not. */
    private static String checkHello(Frame f) {
        if (f.type() != HELLO || f.body().length < HELLO_NONCE_OFFSET) {
            return "the first frame is not a gda4j hello";
        }
        ByteBuffer b = f.buffer();
        int magic = b.getInt(HELLO_MAGIC_OFFSET);
        short version = b.getShort(HELLO_VERSION_OFFSET);
        if (magic != BootstrapFrameDescriptor.MAGIC) {
            return "not a gda4j bootstrap hello (magic " + Integer.toHexString(magic) + ")";
        }
        if (version != BootstrapFrameDescriptor.VERSION) {
            return "bootstrap protocol version " + version + ", the root speaks " + BootstrapFrameDescriptor.VERSION
                    + ": use the same gda4j in every process";
        }
        if (f.body().length != HELLO_BYTES) {
            return "a hello of " + f.body().length + " bytes: version " + version + " has " + HELLO_BYTES;
        }
        return null;
    }

    /** Null when a proven rank's hello fits this world, else why not. */
    private String checkMembership(Frame f) {
        ByteBuffer b = f.buffer();
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

    private static void refuse(PeerLink link, String why) {
        try {
            link.sendNow(REFUSE, BootstrapFrameDescriptor.text(why));
        } catch (IOException e) {
            // the stray is gone already: nothing to tell it
        }
        PeerLink.closeQuietly(link.socket);
    }

    /** " Refused meanwhile: ..." naming the latest refused gda4j hellos, or empty. */
    String refusalsNamed() {
        synchronized (refusedHellos) {
            return refusedHellos.isEmpty() ? "" : " Refused meanwhile: " + String.join("; ", refusedHellos);
        }
    }

    /** Stops accepting (the caller closes the server socket) and the deadline timer. */
    @Override
    public void close() {
        closed = true;
        helloDeadlines.shutdownNow();
    }
}
