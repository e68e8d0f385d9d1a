package io.gda4j.bootstrap;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * One TCP connection. Frames are queued by {@link #send} and written by the link's own writer thread, so no
 * caller (a collective, the heartbeat thread, the failure path) ever blocks on a peer that stopped reading; the
 * heartbeat thread sees such a peer through {@link #stalledNanos} and declares it dead, which closes the link.
 * Before the writer starts (the handshake), {@link #sendNow} writes directly.
 */
final class PeerLink {
    /** Hears that a write failed: the peer is gone (the link is closed already). */
    interface WriteFailure {
        void onWriteFailure(int peer, String why);
    }

    /** Bytes written between two progress stamps: a stalled peer is seen within one such chunk. */
    private static final int WRITE_CHUNK_BYTES = 64 * 1024;

    final int peer;
    final Socket socket;
    private final WriteFailure failure;
    final InputStream in;
    private final OutputStream out;
    /** Frames not yet written, oldest first (under this). */
    private final ArrayDeque<byte[]> queue = new ArrayDeque<>();
    private long queuedBytes;
    private boolean writing;
    private boolean closed;
    /** Close once the queue is written (a verdict for a silent peer), without waiting in the caller. */
    private boolean closeWhenDrained;
    /** Whether a writer thread drains the queue (not during the handshake). */
    private boolean writerStarted;
    /** When the writer last moved bytes into the socket while it had some to write; 0 when it has none. */
    private volatile long busySinceNanos;

    /** A link for the handshake (peer -1 while unknown) or a member's link to the root. */
    PeerLink(int peer, Socket socket, WriteFailure failure) throws IOException {
        this.peer = peer;
        this.socket = socket;
        this.failure = failure;
        this.in = new BufferedInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    /** The link of a handshake, now registered as {@code peer}'s. */
    PeerLink(int peer, PeerLink handshake, WriteFailure failure) {
        this.peer = peer;
        this.socket = handshake.socket;
        this.failure = failure;
        this.in = handshake.in;
        this.out = handshake.out;
    }

    /** Writes one frame on the caller's thread: only before the writer starts (a few bytes of handshake). */
    void sendNow(byte type, byte[] body) throws IOException {
        BufferedOutputStream buffered = new BufferedOutputStream(out);
        BootstrapFrameDescriptor.write(buffered, type, body);
    }

    /** Queues one frame; never blocks. Dropped when the link is closed (its peer is dead or gone). */
    void send(byte type, byte[] body) {
        byte[] header = ByteBuffer.allocate(BootstrapFrameDescriptor.BODY_OFFSET).putInt(1 + body.length)
                .put(type).array();
        // a small frame goes out in one write (one segment: TCP_NODELAY is on); a large one is not copied
        byte[] whole = body.length > WRITE_CHUNK_BYTES ? null
                : ByteBuffer.allocate(header.length + body.length).put(header).put(body).array();
        synchronized (this) {
            if (closed) {
                return;
            }
            if (whole != null) {
                queue.add(whole);
            } else {
                queue.add(header);
                queue.add(body);
            }
            queuedBytes += header.length + body.length;
            notifyAll();
        }
    }

    /** Whether nothing is queued or being written. */
    synchronized boolean idle() {
        return queue.isEmpty() && !writing;
    }

    synchronized long unsentBytes() {
        return queuedBytes;
    }

    /** How long the writer has had bytes to write without moving any, or 0. */
    long stalledNanos(long now) {
        long since = busySinceNanos;
        return since == 0 ? 0 : now - since;
    }

    /** The writer thread: writes queued frames in order until the link closes or a write fails. */
    void writeLoop() {
        synchronized (this) {
            writerStarted = true;
        }
        while (true) {
            byte[] next;
            synchronized (this) {
                while (queue.isEmpty() && !closed && !closeWhenDrained) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
                if (closed) {
                    return;
                }
                if (queue.isEmpty()) { // closeWhenDrained
                    break;
                }
                next = queue.poll();
                if (!writing) {
                    writing = true;
                    busySinceNanos = System.nanoTime();
                }
            }
            try {
                for (int at = 0; at < next.length; at += WRITE_CHUNK_BYTES) {
                    out.write(next, at, Math.min(WRITE_CHUNK_BYTES, next.length - at));
                    busySinceNanos = System.nanoTime();
                }
                if (next.length == 0) {
                    busySinceNanos = System.nanoTime();
                }
            } catch (IOException e) {
                if (!isClosed()) {
                    failure.onWriteFailure(peer, "connection lost: " + e.getMessage());
                }
                close();
                return;
            }
            synchronized (this) {
                queuedBytes -= next.length;
                if (queue.isEmpty()) {
                    writing = false;
                    busySinceNanos = 0;
                }
                notifyAll(); // awaitDrained
            }
        }
        close(); // closeWhenDrained: all written
    }

    /**
     * Waits until every queued frame is written, the link closes, or {@code deadlineNanos}; at once when no writer
     * ever started (a join that failed in its handshake has nothing to flush).
     */
    synchronized void awaitDrained(long deadlineNanos) {
        while ((!queue.isEmpty() || writing) && !closed && writerStarted) {
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                return;
            }
            try {
                TimeUnit.NANOSECONDS.timedWait(this, left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    synchronized boolean isClosed() {
        return closed;
    }

    /** Lets the writer write what is queued, then close; returns at once. Without a writer, closes now. */
    void closeWhenDrained() {
        synchronized (this) {
            if (writerStarted) {
                closeWhenDrained = true;
                notifyAll();
                return;
            }
        }
        close();
    }

    /** Closes the socket (a writer blocked in it fails at once) and drops what is queued. */
    void close() {
        synchronized (this) {
            closed = true;
            queue.clear();
            queuedBytes = 0;
            notifyAll();
        }
        closeQuietly(socket);
    }

    static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing: nothing more to do
        }
    }
}
