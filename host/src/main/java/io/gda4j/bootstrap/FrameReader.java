package io.gda4j.bootstrap;

import static io.gda4j.bootstrap.BootstrapFrameDescriptor.MAC_BYTES;

import io.gda4j.bootstrap.BootstrapFrameDescriptor.FrameException;
import io.gda4j.bootstrap.BootstrapFrameDescriptor.IntegrityException;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.security.MessageDigest;

import javax.crypto.Mac;

/**
 * Reads one connection's frames (layout in {@link BootstrapFrameDescriptor}) field by field, so that a large part
 * is read once into an array of its own size, and, once the connection is authenticated ({@link #authenticate}),
 * checks each frame's MAC. A frame is {@link #begin}, its fields, {@link #end}; nothing read may be acted on before
 * {@code end} returns. A field that does not fit in what is left of the frame is a {@link FrameException}, never an
 * unchecked exception. One reader thread at a time.
 */
final class FrameReader {
    private final DataInputStream in;
    private final byte[] scratch = new byte[Long.BYTES];
    /** The peer's frame MAC, null during the handshake. */
    private Mac mac;
    private long frameNumber;
    private byte type;
    private int length;
    /** Body bytes of the current frame not read yet (the MAC not counted); -1 between frames. */
    private int remaining = -1;

    FrameReader(InputStream in) {
        this.in = new DataInputStream(in);
    }

    /** From the next frame on, every frame must end in its MAC under {@code mac}, numbered from 0. */
    void authenticate(Mac peerMac) {
        this.mac = peerMac;
        this.frameNumber = 0;
    }

    /**
     * Starts the next frame: refuses a length outside what a frame can be and {@code limitBytes} before reading
     * anything else, and returns its type.
     */
    byte begin(int limitBytes) throws IOException {
        try {
            length = in.readInt();
        } catch (EOFException e) {
            throw new EOFException("connection closed");
        }
        int least = 1 + (mac == null ? 0 : MAC_BYTES);
        if (length < least || length > limitBytes) {
            throw new FrameException("a frame of " + Integer.toUnsignedString(length) + " bytes (limit " + limitBytes
                    + "): not a gda4j bootstrap peer, or a message over the limit");
        }
        type = readFully(1)[0];
        if (mac != null) {
            mac.update(ByteBuffer.allocate(Long.BYTES).putLong(frameNumber).array());
            mac.update(BootstrapFrameDescriptor.header(length, type));
        }
        remaining = length - least;
        return type;
    }

    /** Body bytes of this frame not read yet. */
    int remaining() {
        return remaining;
    }

    long readLong() throws IOException {
        return ByteBuffer.wrap(field(Long.BYTES, "an int64")).getLong();
    }

    int readInt() throws IOException {
        return ByteBuffer.wrap(field(Integer.BYTES, "an int32")).getInt();
    }

    byte readByte() throws IOException {
        return field(1, "a byte")[0];
    }

    /** The next {@code n} bytes of the body, in an array of their own. */
    byte[] readBytes(int n) throws IOException {
        if (n < 0 || n > remaining) {
            throw malformed("a field of " + n + " bytes where " + remaining + " remain");
        }
        byte[] b = readFully(n);
        remaining -= n;
        if (mac != null) {
            mac.update(b);
        }
        return b;
    }

    /** The rest of the body. */
    byte[] readRest() throws IOException {
        return readBytes(remaining);
    }

    /** Ends the frame: nothing of the body may be left over, and the MAC, once authenticated, must be right. */
    void end() throws IOException {
        if (remaining != 0) {
            throw malformed(remaining + " bytes after its last field");
        }
        remaining = -1;
        if (mac != null) {
            byte[] expected = mac.doFinal();
            byte[] got = readFully(MAC_BYTES);
            if (!MessageDigest.isEqual(expected, got)) {
                throw new IntegrityException("a frame (type " + type + ", " + length + " bytes, number " + frameNumber
                        + " from it) whose MAC is wrong: it was changed on the way (a program or device between the"
                        + " two processes), or it does not come from the process that joined");
            }
            frameNumber++;
        }
    }

    /** A frame of this type has fields that do not fit the frame: the connection is dropped with this reason. */
    FrameException malformed(String what) {
        return new FrameException("a malformed frame of type " + type + " (" + length + " bytes): " + what);
    }

    private byte[] field(int n, String what) throws IOException {
        if (n > remaining) {
            throw malformed(what + " where " + remaining + " bytes remain");
        }
        byte[] b = n <= scratch.length ? scratch : new byte[n];
        try {
            in.readFully(b, 0, n);
        } catch (EOFException e) {
            throw cutShort();
        }
        remaining -= n;
        if (mac != null) {
            mac.update(b, 0, n);
        }
        return b;
    }

    private byte[] readFully(int n) throws IOException {
        byte[] b = new byte[n];
        try {
            in.readFully(b);
        } catch (EOFException e) {
            throw cutShort();
        }
        return b;
    }

    private EOFException cutShort() {
        // DataInputStream's EOFException has no message: say what was cut short
        return new EOFException("connection closed inside a frame of " + length + " bytes");
    }
}
