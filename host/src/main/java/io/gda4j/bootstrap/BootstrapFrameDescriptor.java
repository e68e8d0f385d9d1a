package io.gda4j.bootstrap;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The bootstrap's frames on the TCP connection between a rank and the root; all integers big-endian.
 *
 * <pre>
 *  0          4      5
 *  +----------+------+------------------------------+
 *  | length   | type | body (length - 1 bytes)      |   length: int32, counts type and body, at most a limit
 *  +----------+------+------------------------------+
 *
 *  HELLO body (rank to root, the first frame; at most HELLO_LIMIT_BYTES):
 *  0        4         6      10          14                    46
 *  +--------+---------+------+-----------+---------------------+
 *  | magic  | version | rank | worldSize | rank nonce (32)     |
 *  +--------+---------+------+-----------+---------------------+
 *
 *  The handshake proves the job token both ways without sending it (HMAC-SHA256 keyed by the token's UTF-8):
 *    rank -> root  HELLO      magic | version | rank | worldSize | rank nonce      (refused here: magic, version, size)
 *    root -> rank  CHALLENGE  root nonce (32)
 *    rank -> root  PROOF      HMAC(token, "gda4j-rank" | HELLO body | root nonce) (32)   refused: wrong job token
 *    root -> rank  WELCOME    HMAC(token, "gda4j-root" | HELLO body | root nonce) (32)   the rank checks it
 *    root -> rank  READY      when every rank has joined
 *
 *  COLLECTIVE body (rank to root):  seq int64 | kind int8 | contribution bytes
 *  RESULT body (root to rank):      seq int64 | count int32 | count x (length int32 | bytes), in rank order
 *  PEER_FAILED body (root to rank): rank int32 | reason (UTF-8)
 *  ABORT body (both ways):          rank int32 | reason (UTF-8)   a rank stopped its kernels; the root relays it
 *  REFUSE, FAIL body:               reason (UTF-8)
 *  READY, HEARTBEAT, GOODBYE: no body
 * </pre>
 */
public final class BootstrapFrameDescriptor {
    /** "GDA4": a stray client is refused on its first four bytes. */
    public static final int MAGIC = 0x47444134;
    /** 2: the token is proven by HMAC over both sides' nonces, never sent (1 sent it in the hello). */
    public static final short VERSION = 2;

    public static final int LENGTH_OFFSET = 0;
    public static final int TYPE_OFFSET = 4;
    public static final int BODY_OFFSET = 5;

    /** A hello is small: anything longer before authentication is refused unread. */
    public static final int HELLO_LIMIT_BYTES = 1024;
    public static final int MAX_TOKEN_BYTES = 512;

    public static final int HELLO_MAGIC_OFFSET = 0;
    public static final int HELLO_VERSION_OFFSET = 4;
    public static final int HELLO_RANK_OFFSET = 6;
    public static final int HELLO_WORLD_SIZE_OFFSET = 10;
    public static final int HELLO_NONCE_OFFSET = 14;
    public static final int NONCE_BYTES = 32;
    public static final int HELLO_BYTES = HELLO_NONCE_OFFSET + NONCE_BYTES;
    public static final int PROOF_BYTES = 32;
    /** What each side's proof is keyed over first, so that the root's proof is never a valid rank's proof. */
    public static final String RANK_PROOF_LABEL = "gda4j-rank";
    public static final String ROOT_PROOF_LABEL = "gda4j-root";

    public static final byte HELLO = 1;
    public static final byte WELCOME = 2;
    public static final byte REFUSE = 3;
    public static final byte READY = 4;
    public static final byte COLLECTIVE = 5;
    public static final byte RESULT = 6;
    public static final byte HEARTBEAT = 7;
    public static final byte PEER_FAILED = 8;
    public static final byte FAIL = 9;
    public static final byte GOODBYE = 10;
    public static final byte ABORT = 11;
    public static final byte CHALLENGE = 12;
    public static final byte PROOF = 13;

    /** Collective kinds: every rank must enter the same kind at the same sequence number. */
    public static final byte KIND_ALL_GATHER = 1;
    public static final byte KIND_BARRIER = 2;

    private static final String HMAC = "HmacSHA256";
    private static final SecureRandom RANDOM = new SecureRandom();

    private BootstrapFrameDescriptor() {
    }

    /** One frame read off a connection. */
    public record Frame(byte type, byte[] body) {
        public ByteBuffer buffer() {
            return ByteBuffer.wrap(body);
        }

        public String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    /** Reads one frame; refuses a length outside 1..limitBytes before reading the body. */
    public static Frame read(InputStream in, int limitBytes) throws IOException {
        DataInputStream data = new DataInputStream(in);
        int length;
        try {
            length = data.readInt();
        } catch (EOFException e) {
            throw new EOFException("connection closed");
        }
        if (length < 1 || length > limitBytes) {
            throw new FrameException("a frame of " + Integer.toUnsignedString(length) + " bytes (limit " + limitBytes
                    + "): not a gda4j bootstrap peer, or a message over the limit");
        }
        byte[] body = new byte[length - 1];
        byte type;
        try {
            type = data.readByte();
            data.readFully(body);
        } catch (EOFException e) {
            // DataInputStream's EOFException has no message: say what was cut short
            throw new EOFException("connection closed inside a frame of " + length + " bytes");
        }
        return new Frame(type, body);
    }

    /** Writes one frame and flushes; callers serialise writers of one connection. */
    public static void write(OutputStream out, byte type, byte[] body) throws IOException {
        DataOutputStream data = new DataOutputStream(out);
        data.writeInt(1 + body.length);
        data.writeByte(type);
        data.write(body);
        data.flush();
    }

    public static byte[] hello(int rank, int worldSize, byte[] nonce) {
        if (nonce.length != NONCE_BYTES) {
            throw new IllegalArgumentException("a nonce of " + nonce.length + " bytes: " + NONCE_BYTES + " needed");
        }
        return ByteBuffer.allocate(HELLO_BYTES).putInt(MAGIC).putShort(VERSION).putInt(rank).putInt(worldSize)
                .put(nonce).array();
    }

    /** A fresh nonce for a hello or a challenge. */
    public static byte[] nonce() {
        byte[] n = new byte[NONCE_BYTES];
        RANDOM.nextBytes(n);
        return n;
    }

    /**
     * One side's proof that it knows {@code token}: HMAC-SHA256 keyed by the token over the label, the hello body
     * and the root's nonce. Both nonces are in it, so a proof is never valid for another handshake.
     *
     * @param label {@link #RANK_PROOF_LABEL} or {@link #ROOT_PROOF_LABEL}
     */
    public static byte[] proof(String token, String label, byte[] helloBody, byte[] rootNonce) {
        byte[] key = token.getBytes(StandardCharsets.UTF_8);
        if (key.length == 0 || key.length > MAX_TOKEN_BYTES) {
            throw new IllegalArgumentException("job token of " + key.length + " bytes: 1 to " + MAX_TOKEN_BYTES);
        }
        try {
            Mac mac = Mac.getInstance(HMAC);
            mac.init(new SecretKeySpec(key, HMAC));
            mac.update(label.getBytes(StandardCharsets.US_ASCII));
            mac.update(helloBody);
            mac.update(rootNonce);
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(HMAC + " is part of every JDK", e);
        }
    }

    public static byte[] collective(long seq, byte kind, byte[] contribution) {
        return ByteBuffer.allocate(9 + contribution.length).putLong(seq).put(kind).put(contribution).array();
    }

    public static byte[] result(long seq, byte[][] parts) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream data = new DataOutputStream(bytes);
        try {
            data.writeLong(seq);
            data.writeInt(parts.length);
            for (byte[] p : parts) {
                data.writeInt(p.length);
                data.write(p);
            }
        } catch (IOException e) {
            throw new IllegalStateException(e); // a ByteArrayOutputStream does not throw
        }
        return bytes.toByteArray();
    }

    public static byte[] abort(int rank, String reason) {
        return peerFailed(rank, reason);
    }

    public static byte[] peerFailed(int rank, String reason) {
        byte[] r = text(reason);
        return ByteBuffer.allocate(4 + r.length).putInt(rank).put(r).array();
    }

    /** UTF-8 of {@code s}; a null reason (an exception without a message) becomes "unknown". */
    public static byte[] text(String s) {
        return (s == null ? "unknown" : s).getBytes(StandardCharsets.UTF_8);
    }

    /** A frame that breaks the protocol: the connection is dropped with this reason. */
    public static final class FrameException extends IOException {
        private static final long serialVersionUID = 1L;

        public FrameException(String message) {
            super(message);
        }
    }
}
