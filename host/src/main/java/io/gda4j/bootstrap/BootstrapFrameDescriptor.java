package io.gda4j.bootstrap;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;

import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The bootstrap's frames on the TCP connection between a rank and the root; all integers big-endian.
 *
 * <pre>
 *  0          4      5
 *  +----------+------+------------------------------+---------------------+
 *  | length   | type | body                         | MAC (32, see below) |   length: int32, counts type, body
 *  +----------+------+------------------------------+---------------------+   and MAC, at most a limit
 *
 *  HELLO body (rank to root, the first frame; at most HELLO_LIMIT_BYTES):
 *  0        4         6      10          14                    46
 *  +--------+---------+------+-----------+---------------------+
 *  | magic  | version | rank | worldSize | rank nonce (32)     |
 *  +--------+---------+------+-----------+---------------------+
 *
 *  The handshake proves the job token both ways without sending it (HMAC-SHA256 keyed by the token's UTF-8); its
 *  frames carry no MAC:
 *    rank -> root  HELLO      magic | version | rank | worldSize | rank nonce      (refused here: magic, version)
 *    root -> rank  CHALLENGE  root nonce (32)
 *    rank -> root  PROOF      HMAC(token, "gda4j-rank" | HELLO body | root nonce) (32)
 *    root -> rank  WELCOME    HMAC(token, "gda4j-root" | HELLO body | root nonce) (32)   the rank checks it
 *             or   SEALED_REFUSE  why not, readable only with the token (below)
 *
 *  Session keys, one per use: HMAC(token, label | HELLO body | root nonce), label "gda4j-key-rank" (frames from the
 *  rank), "gda4j-key-root" (frames from the root), "gda4j-key-refuse" (a sealed refusal). Every frame after the
 *  WELCOME, both ways, ends in its MAC: HMAC-SHA256 under its sender's key over
 *    frame number int64 (0, 1, ... per direction) | length int32 | type int8 | body
 *  so a byte changed, a frame dropped, replayed, reordered or reflected on the way fails the check.
 *
 *  SEALED_REFUSE body (root to rank, instead of WELCOME: every refusal after a PROOF, right token or not):
 *  0                                  256           272
 *  +----------------------------------+-------------+
 *  | ciphertext (256)                 | tag (16)    |   AES-GCM of: reason length int16 | reason (UTF-8) | zeros
 *  +----------------------------------+-------------+
 *    key: the first 16 bytes of the refusal key; nonce: 12 zero bytes (the key is used once). The same length and
 *    type whatever the reason, so a stranger cannot tell a wrong token from a right one.
 *
 *  After the WELCOME (each with its MAC):
 *  READY (root to rank, when every rank has joined), HEARTBEAT, GOODBYE: no body
 *  COLLECTIVE body (rank to root):  seq int64 | kind int8 | contribution bytes
 *  RESULT body (root to rank):      seq int64 | count int32 | count x (length int32 | bytes), in rank order
 *  PEER_FAILED body (root to rank): rank int32 | reason (UTF-8)
 *  ABORT body (both ways):          rank int32 | reason (UTF-8)   a rank stopped its kernels; the root relays it
 *  FAIL body (root to rank):        reason (UTF-8)
 *  REFUSE body (root to rank, before a PROOF only: a stray's first frame): reason (UTF-8)
 * </pre>
 */
public final class BootstrapFrameDescriptor {
    /** "GDA4": a stray client is refused on its first four bytes. */
    public static final int MAGIC = 0x47444134;
    /**
     * 3: every frame after the handshake carries a MAC under a session key, and refusals after a proof are sealed
     * (2 proved the token by HMAC over both nonces, 1 sent it in the hello).
     */
    public static final short VERSION = 3;

    public static final int LENGTH_OFFSET = 0;
    public static final int TYPE_OFFSET = 4;
    public static final int BODY_OFFSET = 5;
    public static final int HEADER_BYTES = BODY_OFFSET;

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
    /** The session keys' labels: frames from the rank, frames from the root, a sealed refusal. */
    public static final String RANK_KEY_LABEL = "gda4j-key-rank";
    public static final String ROOT_KEY_LABEL = "gda4j-key-root";
    public static final String REFUSAL_KEY_LABEL = "gda4j-key-refuse";

    /** A reason (FAIL, PEER_FAILED, ABORT, REFUSE) is cut to this many characters: it is for a person to read. */
    public static final int REASON_MAX_CHARS = 4096;
    /** A frame that carries only a rank and a reason is at most this long, whatever the all-gather limit. */
    public static final int REASON_FRAME_LIMIT_BYTES = 64 * 1024;

    /** The MAC that ends every frame after the handshake (HMAC-SHA256, untruncated). */
    public static final int MAC_BYTES = 32;
    /** A sealed refusal's plaintext: a reason length (int16), the reason, zero padding. */
    public static final int SEALED_REASON_BYTES = 256;
    public static final int SEAL_TAG_BYTES = 16;
    public static final int SEALED_REFUSE_BODY_BYTES = SEALED_REASON_BYTES + SEAL_TAG_BYTES;
    /** The longest reason a sealed refusal carries; a longer one is cut. */
    public static final int SEALED_REASON_MAX_BYTES = SEALED_REASON_BYTES - 2;

    public static final int COLLECTIVE_SEQ_OFFSET = 0;
    public static final int COLLECTIVE_KIND_OFFSET = 8;
    public static final int COLLECTIVE_PART_OFFSET = 9;
    public static final int RESULT_SEQ_OFFSET = 0;
    public static final int RESULT_COUNT_OFFSET = 8;
    public static final int RESULT_PARTS_OFFSET = 12;
    /** Each part of a RESULT is preceded by its length. */
    public static final int RESULT_PART_LENGTH_BYTES = 4;

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
    public static final byte SEALED_REFUSE = 14;

    /** Collective kinds: every rank must enter the same kind at the same sequence number. */
    public static final byte KIND_ALL_GATHER = 1;
    public static final byte KIND_BARRIER = 2;

    private static final String HMAC = "HmacSHA256";
    private static final String SEAL = "AES/GCM/NoPadding";
    private static final int SEAL_KEY_BYTES = 16;
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

    /** Reads one handshake frame (no MAC); refuses a length outside 1..limitBytes before reading the body. */
    public static Frame read(InputStream in, int limitBytes) throws IOException {
        FrameReader r = new FrameReader(in);
        byte type = r.begin(limitBytes);
        byte[] body = r.readRest();
        r.end();
        return new Frame(type, body);
    }

    /** Writes one handshake frame (no MAC) in one write and flushes; callers serialise writers of one connection. */
    public static void write(OutputStream out, byte type, byte[] body) throws IOException {
        out.write(ByteBuffer.allocate(HEADER_BYTES + body.length).put(header(1 + body.length, type)).put(body)
                .array());
        out.flush();
    }

    /**
     * Writes one frame of an authenticated connection with its MAC after it, in one write, and flushes.
     *
     * @param mac         the sender's frame MAC ({@link #hmacSha256} of its key)
     * @param frameNumber this frame's number in its direction, from 0
     */
    public static void writeAuthenticated(OutputStream out, Mac mac, long frameNumber, byte type, byte[] body)
            throws IOException {
        byte[] header = header(1 + body.length + MAC_BYTES, type);
        out.write(ByteBuffer.allocate(HEADER_BYTES + body.length + MAC_BYTES).put(header).put(body)
                .put(mac(mac, frameNumber, header, body)).array());
        out.flush();
    }

    /** A frame's length and type, as they start it on the wire. */
    public static byte[] header(int length, byte type) {
        return ByteBuffer.allocate(HEADER_BYTES).putInt(length).put(type).array();
    }

    /** The MAC of frame {@code frameNumber}: over its number, its {@code header} and its body's segments in order. */
    public static byte[] mac(Mac mac, long frameNumber, byte[] header, byte[]... bodySegments) {
        mac.update(ByteBuffer.allocate(Long.BYTES).putLong(frameNumber).array());
        mac.update(header);
        for (byte[] segment : bodySegments) {
            mac.update(segment);
        }
        return mac.doFinal();
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
     * One side's proof that it knows {@code token}, or a session key: HMAC-SHA256 keyed by the token over the label,
     * the hello body and the root's nonce. Both nonces are in it, so neither is ever valid for another handshake.
     *
     * @param label {@link #RANK_PROOF_LABEL}, {@link #ROOT_PROOF_LABEL} or one of the key labels
     */
    public static byte[] proof(String token, String label, byte[] helloBody, byte[] rootNonce) {
        byte[] key = token.getBytes(StandardCharsets.UTF_8);
        if (key.length == 0 || key.length > MAX_TOKEN_BYTES) {
            throw new IllegalArgumentException("job token of " + key.length + " bytes: 1 to " + MAX_TOKEN_BYTES);
        }
        Mac mac = hmacSha256(key);
        mac.update(label.getBytes(StandardCharsets.US_ASCII));
        mac.update(helloBody);
        mac.update(rootNonce);
        return mac.doFinal();
    }

    /** An HMAC-SHA256 keyed by {@code key}: one per direction of a connection (it is not thread-safe). */
    public static Mac hmacSha256(byte[] key) {
        try {
            Mac mac = Mac.getInstance(HMAC);
            mac.init(new SecretKeySpec(key, HMAC));
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(HMAC + " is part of every JDK", e);
        }
    }

    /** A SEALED_REFUSE body: {@code reason}, cut to {@link #SEALED_REASON_MAX_BYTES}, readable with the refusal key. */
    public static byte[] sealRefusal(byte[] refusalKey, String reason) {
        byte[] text = text(reason);
        int n = Math.min(text.length, SEALED_REASON_MAX_BYTES);
        ByteBuffer plain = ByteBuffer.allocate(SEALED_REASON_BYTES).putShort((short) n).put(text, 0, n);
        try {
            return sealCipher(Cipher.ENCRYPT_MODE, refusalKey).doFinal(plain.array());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(SEAL + " is part of every JDK", e);
        }
    }

    /** The reason a SEALED_REFUSE body carries, or null when {@code refusalKey} does not open it (another token). */
    public static String openRefusal(byte[] refusalKey, byte[] body) {
        if (body.length != SEALED_REFUSE_BODY_BYTES) {
            return null;
        }
        byte[] plain;
        try {
            plain = sealCipher(Cipher.DECRYPT_MODE, refusalKey).doFinal(body);
        } catch (AEADBadTagException e) {
            return null;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(SEAL + " is part of every JDK", e);
        }
        int n = ByteBuffer.wrap(plain).getShort();
        return n < 0 || n > SEALED_REASON_MAX_BYTES ? null : new String(plain, 2, n, StandardCharsets.UTF_8);
    }

    private static Cipher sealCipher(int mode, byte[] refusalKey) throws GeneralSecurityException {
        Cipher c = Cipher.getInstance(SEAL);
        c.init(mode, new SecretKeySpec(refusalKey, 0, SEAL_KEY_BYTES, "AES"),
                new GCMParameterSpec(SEAL_TAG_BYTES * 8, new byte[12]));
        return c;
    }

    public static byte[] collective(long seq, byte kind, byte[] contribution) {
        return ByteBuffer.allocate(COLLECTIVE_PART_OFFSET + contribution.length).putLong(seq).put(kind)
                .put(contribution).array();
    }

    /**
     * A RESULT body as segments to be written in order: its seq and count, then each part's length and the part
     * itself, not copied, so one all-gather's parts are shared by every rank's frame.
     */
    public static byte[][] resultSegments(long seq, byte[][] parts) {
        byte[][] segments = new byte[1 + 2 * parts.length][];
        segments[0] = ByteBuffer.allocate(RESULT_PARTS_OFFSET).putLong(seq).putInt(parts.length).array();
        for (int r = 0; r < parts.length; r++) {
            segments[1 + 2 * r] = ByteBuffer.allocate(RESULT_PART_LENGTH_BYTES).putInt(parts[r].length).array();
            segments[2 + 2 * r] = parts[r];
        }
        return segments;
    }

    public static byte[] abort(int rank, String reason) {
        return peerFailed(rank, reason);
    }

    public static byte[] peerFailed(int rank, String reason) {
        byte[] r = text(reason);
        return ByteBuffer.allocate(4 + r.length).putInt(rank).put(r).array();
    }

    /**
     * UTF-8 of a reason, cut to {@link #REASON_MAX_CHARS}; a null reason (an exception without a message) becomes
     * "unknown".
     */
    public static byte[] text(String s) {
        String t = s == null ? "unknown" : s;
        return (t.length() > REASON_MAX_CHARS ? t.substring(0, REASON_MAX_CHARS) : t).getBytes(StandardCharsets.UTF_8);
    }

    /** A frame that breaks the protocol: the connection is dropped with this reason. */
    public static class FrameException extends IOException {
        private static final long serialVersionUID = 1L;

        public FrameException(String message) {
            super(message);
        }
    }

    /** A frame whose MAC is wrong: changed on the way, or not sent by the peer that joined. */
    public static final class IntegrityException extends FrameException {
        private static final long serialVersionUID = 1L;

        public IntegrityException(String message) {
            super(message);
        }
    }
}
