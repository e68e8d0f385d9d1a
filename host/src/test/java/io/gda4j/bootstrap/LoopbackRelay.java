package io.gda4j.bootstrap;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * A program on the path between a rank and the root, on localhost: it accepts the rank's connections and relays each
 * to the root, each direction at most at a rate, and can rewrite the frames going one way (it cuts them by their
 * length prefix, as anything on the path could).
 */
final class LoopbackRelay implements AutoCloseable {
    /** A relayed direction's limits and rewriting. */
    record Direction(long bytesPerSecond, UnaryOperator<byte[]> rewrite) {
        static final Direction FREE = new Direction(0, null);

        static Direction throttled(long bytesPerSecond) {
            return new Direction(bytesPerSecond, null);
        }

        /** Frames (length prefix, type, the rest) go through {@code rewrite}, which may change them in place. */
        static Direction rewriting(UnaryOperator<byte[]> rewrite) {
            return new Direction(0, rewrite);
        }
    }

    private static final int CHUNK_BYTES = 4096;

    private final ServerSocket server;
    private final int rootPort;
    private final Direction up;
    private final Direction down;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    /**
     * @param up   the rank-to-root direction
     * @param down the root-to-rank direction
     */
    LoopbackRelay(int rootPort, Direction up, Direction down) throws IOException {
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.rootPort = rootPort;
        this.up = up;
        this.down = down;
        this.acceptor = new Thread(this::acceptLoop, "relay-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** Where ranks connect instead of the root. */
    InetSocketAddress address() {
        return new InetSocketAddress("127.0.0.1", server.getLocalPort());
    }

    private void acceptLoop() {
        while (true) {
            try {
                Socket rank = server.accept();
                Socket root = new Socket(InetAddress.getLoopbackAddress(), rootPort);
                rank.setTcpNoDelay(true);
                root.setTcpNoDelay(true);
                sockets.add(rank);
                sockets.add(root);
                java.util.concurrent.atomic.AtomicInteger running = new java.util.concurrent.atomic.AtomicInteger(2);
                pump(rank, root, up, "relay-up", running);
                pump(root, rank, down, "relay-down", running);
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    /** Copies one direction; at its end, half-closes it (as TCP would), and the last of the two closes the pair. */
    private void pump(Socket from, Socket to, Direction d, String name,
                      java.util.concurrent.atomic.AtomicInteger running) {
        Thread t = new Thread(() -> {
            try {
                InputStream in = from.getInputStream();
                OutputStream out = to.getOutputStream();
                Pacer pacer = new Pacer(d.bytesPerSecond());
                if (d.rewrite() == null) {
                    byte[] buf = new byte[CHUNK_BYTES];
                    for (int n; (n = in.read(buf)) >= 0; ) {
                        out.write(buf, 0, n);
                        pacer.sent(n);
                    }
                } else {
                    DataInputStream data = new DataInputStream(in);
                    while (true) {
                        int length = data.readInt();
                        byte[] frame = new byte[4 + length];
                        frame[0] = (byte) (length >>> 24);
                        frame[1] = (byte) (length >>> 16);
                        frame[2] = (byte) (length >>> 8);
                        frame[3] = (byte) length;
                        data.readFully(frame, 4, length);
                        out.write(d.rewrite().apply(frame));
                        pacer.sent(frame.length);
                    }
                }
            } catch (EOFException e) {
                // the sender closed
            } catch (IOException | InterruptedException e) {
                // a side closed, or the relay
            } finally {
                try {
                    to.shutdownOutput();
                } catch (IOException ignored) {
                    // closed already
                }
                if (running.decrementAndGet() == 0) {
                    PeerLink.closeQuietly(from);
                    PeerLink.closeQuietly(to);
                }
            }
        }, name);
        t.setDaemon(true);
        t.start();
    }

    /** Sleeps so that the bytes sent so far went at most at the rate (0: unlimited). */
    private static final class Pacer {
        private final long bytesPerSecond;
        private final long start = System.nanoTime();
        private long total;

        Pacer(long bytesPerSecond) {
            this.bytesPerSecond = bytesPerSecond;
        }

        void sent(int n) throws InterruptedException {
            total += n;
            if (bytesPerSecond > 0) {
                long due = start + total * TimeUnit.SECONDS.toNanos(1) / bytesPerSecond;
                long wait = due - System.nanoTime();
                if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait);
                }
            }
        }
    }

    @Override
    public void close() {
        PeerLink.closeQuietly(server);
        for (Socket s : sockets) {
            PeerLink.closeQuietly(s);
        }
    }
}
