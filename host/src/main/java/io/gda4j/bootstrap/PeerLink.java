package io.gda4j.bootstrap;

import static io.gda4j.bootstrap.BootstrapFrameDescriptor.MAC_BYTES;

import java.io.BufferedInputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

import javax.crypto.Mac;

/**
 * One TCP connection. Frames are queued by {@link #send} and written by the link's own writer thread, so no
 * caller (a collective, the heartbeat thread, the failure path) ever blocks on a peer that stopped reading; the
 * heartbeat thread sees such a peer through {@link #stalledNanos} and declares it dead, which closes the link.
 * Before the writer starts (the handshake), {@link #sendNow} writes directly, without a MAC. Once
 * {@link #authenticate}d, every queued frame ends in its MAC and every frame {@link #in} reads is checked.
 * Every read that brings bytes stamps {@link #lastReadNanos}: a peer whose large frame is still arriving is alive.
 */
final class PeerLink {
    /**
     * Hears that a write failed: the peer is gone. The socket is left open for the connection's reader, which may
     * still hold frames the peer sent before it went (a verdict on another rank, the FAIL that explains a close).
     */
    interface WriteFailure {
        void onWriteFailure(int peer, String why);
    }

    /** The most one socket write takes: a peer that reads this much within dead-after is alive. */
    private static final int WRITE_CHUNK_BYTES = 16 * 1024;
    private static final int READ_BUFFER_BYTES = 64 * 1024;

    /** One frame waiting for the writer: its body is its segments in order, written as they are (not copied). */
    private record Outgoing(byte type, byte[][] segments, int bodyBytes) {
    }

    final int peer;
    final Socket socket;
    private final WriteFailure failure;
    /** This connection's frames, field by field (the reader thread's alone). */
    final FrameReader in;
    private final OutputStream out;
    /** The MAC of frames this side sends (the writer thread's alone once it runs), null before authentication. */
    private Mac sendMac;
    private long framesSent;
    /** Frames not yet written, oldest first (under this). */
    private final ArrayDeque<Outgoing> queue = new ArrayDeque<>();
    private long queuedBytes;
    private boolean writing;
    private boolean closed;
    /** Close once the queue is written (a verdict for a silent peer), without waiting in the caller. */
    private boolean closeWhenDrained;
    /** Whether a writer thread drains the queue (not during the handshake). */
    private boolean writerStarted;
    /** A write failed: the writer has stopped, the socket stays open for the reader until the link is closed. */
    private boolean writerFailed;
    /**
     * When the writer's socket write under way began; 0 outside a write. Only a write the peer does not take counts
     * as a stall, not the writer's own work between writes (a MAC, a CPU it waits for on a busy host).
     */
    private volatile long writeSinceNanos;
    /** When a read last brought bytes from the peer. */
    private volatile long lastReadNanos = System.nanoTime();

    /** A link whose handshake is still to come ({@link #authenticate} when it is done); peer 0 for a member's. */
    PeerLink(int peer, Socket socket, WriteFailure failure) throws IOException {
        this.peer = peer;
        this.socket = socket;
        this.failure = failure;
        this.in = new FrameReader(new BufferedInputStream(new StampingInput(socket.getInputStream()),
                READ_BUFFER_BYTES));
        this.out = socket.getOutputStream();
    }

    /** The handshake is done: frames sent from now on carry a MAC under {@code sendKey}, those read under the other. */
    void authenticate(byte[] sendKey, byte[] receiveKey) {
        synchronized (this) {
            sendMac = BootstrapFrameDescriptor.hmacSha256(sendKey);
        }
        in.authenticate(BootstrapFrameDescriptor.hmacSha256(receiveKey));
    }

    /** Writes one handshake frame (no MAC) on the caller's thread: only before the writer starts. */
    void sendNow(byte type, byte[] body) throws IOException {
        BootstrapFrameDescriptor.write(out, type, body); // one write: one segment (TCP_NODELAY is on)
    }

    /**
     * Queues one frame whose body is {@code segments} in order; never blocks. The segments are written as they are,
     * later, by the writer: the caller must not change them. Dropped when the link is closed (its peer is dead or
     * gone).
     */
    void send(byte type, byte[]... segments) {
        long body = 0;
        for (byte[] s : segments) {
            body += s.length;
        }
        if (body > Integer.MAX_VALUE - BootstrapFrameDescriptor.HEADER_BYTES - MAC_BYTES) {
            throw new IllegalArgumentException("a frame of " + body + " bytes: more than one frame can hold");
        }
        synchronized (this) {
            if (closed || writerFailed) {
                return;
            }
            queue.add(new Outgoing(type, segments, (int) body));
            queuedBytes += BootstrapFrameDescriptor.HEADER_BYTES + body + MAC_BYTES;
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

    /** How long the writer has been inside one socket write, the peer taking none of it, or 0. */
    long stalledNanos(long now) {
        long since = writeSinceNanos;
        return since == 0 ? 0 : now - since;
    }

    /** This process was paused until {@code now}: a write it had under way gets a fresh dead-after from now. */
    void restartStallWindow(long now) {
        if (writeSinceNanos != 0) {
            writeSinceNanos = now; // racing the writer's own stamp is harmless: both are "now"
        }
    }

    /** When a read last brought bytes from the peer ({@link System#nanoTime}). */
    long lastReadNanos() {
        return lastReadNanos;
    }

    /** The writer thread: writes queued frames in order until the link closes or a write fails. */
    void writeLoop() {
        Mac mac;
        synchronized (this) {
            writerStarted = true;
            mac = sendMac;
        }
        if (mac == null) {
            throw new IllegalStateException("link to rank " + peer + " started its writer before its handshake");
        }
        while (true) {
            Outgoing next;
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
                writing = true;
            }
            try {
                write(mac, next);
            } catch (IOException e) {
                boolean report;
                synchronized (this) {
                    report = !closed && !writerFailed;
                    writerFailed = true; // what is queued or sent later goes nowhere: dropped
                    writing = false;
                    queue.clear();
                    queuedBytes = 0;
                    notifyAll();
                }
                if (report) {
                    failure.onWriteFailure(peer, "connection lost: " + e.getMessage());
                }
                return;
            }
            synchronized (this) {
                queuedBytes -= BootstrapFrameDescriptor.HEADER_BYTES + next.bodyBytes() + MAC_BYTES;
                if (queue.isEmpty()) {
                    writing = false;
                }
                notifyAll();
            }
        }
        close();
    }

    /** Writes one frame and its MAC; a small one in one write (one TCP segment), a large one chunk by chunk. */
    private void write(Mac mac, Outgoing f) throws IOException {
        int length = 1 + f.bodyBytes() + MAC_BYTES;
        byte[] header = BootstrapFrameDescriptor.header(length, f.type());
        long number = framesSent++;
        int wireBytes = BootstrapFrameDescriptor.TYPE_OFFSET + length; // the length does not count itself
        if (wireBytes <= WRITE_CHUNK_BYTES) {
            ByteBuffer whole = ByteBuffer.allocate(wireBytes).put(header);
            for (byte[] s : f.segments()) {
                whole.put(s);
            }
            whole.put(BootstrapFrameDescriptor.mac(mac, number, header, f.segments()));
            writeChunk(whole.array(), 0, wireBytes);
            return;
        }
        mac.update(ByteBuffer.allocate(Long.BYTES).putLong(number).array());
        mac.update(header);
        writeChunk(header, 0, header.length);
        for (byte[] s : f.segments()) {
            for (int at = 0; at < s.length; at += WRITE_CHUNK_BYTES) {
                int n = Math.min(WRITE_CHUNK_BYTES, s.length - at);
                mac.update(s, at, n);
                writeChunk(s, at, n);
            }
        }
        byte[] tag = mac.doFinal();
        writeChunk(tag, 0, tag.length);
    }

    /** One socket write, timed: the heartbeat thread sees one the peer does not take ({@link #stalledNanos}). */
    private void writeChunk(byte[] b, int off, int len) throws IOException {
        writeSinceNanos = System.nanoTime();
        try {
            out.write(b, off, len);
        } finally {
            writeSinceNanos = 0;
        }
    }

    /**
     * Waits until every queued frame is written, the link closes, or {@code deadlineNanos}; at once when no writer
     * ever started (a join that failed in its handshake has nothing to flush).
     */
    synchronized void awaitDrained(long deadlineNanos) {
        while ((!queue.isEmpty() || writing) && !closed && !writerFailed && writerStarted) {
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

    static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // closing: nothing more to do
        }
    }

    /** The socket's input, stamping {@link #lastReadNanos} whenever a read brings bytes. */
    private final class StampingInput extends FilterInputStream {
        StampingInput(InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
                lastReadNanos = System.nanoTime();
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = super.read(b, off, len);
            if (n > 0) {
                lastReadNanos = System.nanoTime();
            }
            return n;
        }
    }
}
