package io.gda4j.bootstrap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gda4j.bootstrap.BootstrapFrameDescriptor.Frame;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;

import javax.crypto.Mac;

/** The bootstrap's handshake by hand, for tests that play a rank or the root with a bare socket. */
final class RawRank {
    private RawRank() {
    }

    /** What a rank's handshake came to: the root's answer to its proof (or its first answer), and both nonces. */
    record Handshake(Frame answer, byte[] hello, byte[] rootNonce) {
        /** The session key of {@code label} this handshake gives whoever knows {@code token}. */
        byte[] key(String token, String label) {
            return BootstrapFrameDescriptor.proof(token, label, hello, rootNonce);
        }

        /** The reason of a sealed refusal as {@code token} opens it, or null when it does not. */
        String openedWith(String token) {
            return BootstrapFrameDescriptor.openRefusal(key(token, BootstrapFrameDescriptor.REFUSAL_KEY_LABEL),
                    answer.body());
        }
    }

    /** One end of an authenticated connection: frames sent and read with their MACs, numbered from 0. */
    static final class Session {
        final Socket socket;
        private final Mac sendMac;
        private final FrameReader in;
        private long sent;

        Session(Socket socket, byte[] sendKey, byte[] receiveKey) throws IOException {
            this.socket = socket;
            this.sendMac = BootstrapFrameDescriptor.hmacSha256(sendKey);
            this.in = new FrameReader(socket.getInputStream());
            in.authenticate(BootstrapFrameDescriptor.hmacSha256(receiveKey));
        }

        void send(byte type, byte[] body) throws IOException {
            BootstrapFrameDescriptor.writeAuthenticated(socket.getOutputStream(), sendMac, sent++, type, body);
        }

        Frame read(int limitBytes) throws IOException {
            byte type = in.begin(limitBytes);
            byte[] body = in.readRest();
            in.end();
            return new Frame(type, body);
        }
    }

    /** Says hello as {@code rank} and answers the challenge with {@code token}'s proof. */
    static Handshake handshake(Socket s, int rank, int size, String token) throws IOException {
        OutputStream out = s.getOutputStream();
        InputStream in = s.getInputStream();
        byte[] hello = BootstrapFrameDescriptor.hello(rank, size, BootstrapFrameDescriptor.nonce());
        BootstrapFrameDescriptor.write(out, BootstrapFrameDescriptor.HELLO, hello);
        Frame challenge = BootstrapFrameDescriptor.read(in, 1024);
        if (challenge.type() != BootstrapFrameDescriptor.CHALLENGE) {
            return new Handshake(challenge, hello, null);
        }
        BootstrapFrameDescriptor.write(out, BootstrapFrameDescriptor.PROOF, BootstrapFrameDescriptor.proof(token,
                BootstrapFrameDescriptor.RANK_PROOF_LABEL, hello, challenge.body()));
        Frame answer = BootstrapFrameDescriptor.read(in, 1024);
        if (answer.type() == BootstrapFrameDescriptor.WELCOME) {
            assertArrayEquals(BootstrapFrameDescriptor.proof(token, BootstrapFrameDescriptor.ROOT_PROOF_LABEL, hello,
                    challenge.body()), answer.body(), "the root proves it knows the token");
        }
        return new Handshake(answer, hello, challenge.body());
    }

    /**
     * The root's answer: WELCOME, a plain REFUSE, or a sealed refusal opened with {@code token} (as a REFUSE with the
     * reason); a sealed refusal {@code token} cannot open comes back as it is.
     */
    static Frame knock(Socket s, int rank, int size, String token) throws IOException {
        Handshake h = handshake(s, rank, size, token);
        if (h.answer().type() == BootstrapFrameDescriptor.SEALED_REFUSE) {
            String why = h.openedWith(token);
            if (why != null) {
                return new Frame(BootstrapFrameDescriptor.REFUSE, BootstrapFrameDescriptor.text(why));
            }
        }
        return h.answer();
    }

    /** Joins as {@code rank}: welcomed, then READY (with its MAC) once the world is complete. */
    static Session join(Socket s, int rank, int size, String token) throws IOException {
        Handshake h = handshake(s, rank, size, token);
        assertEquals(BootstrapFrameDescriptor.WELCOME, h.answer().type(), h.answer().text());
        Session session = new Session(s, h.key(token, BootstrapFrameDescriptor.RANK_KEY_LABEL),
                h.key(token, BootstrapFrameDescriptor.ROOT_KEY_LABEL));
        assertEquals(BootstrapFrameDescriptor.READY, session.read(64).type());
        return session;
    }

    /** Plays the root for one rank that knows {@code token}: challenge, welcome with the root's proof, READY. */
    static Session welcome(Socket s, String token) throws IOException {
        OutputStream out = s.getOutputStream();
        InputStream in = s.getInputStream();
        Frame hello = BootstrapFrameDescriptor.read(in, 1024);
        assertEquals(BootstrapFrameDescriptor.HELLO, hello.type());
        byte[] rootNonce = BootstrapFrameDescriptor.nonce();
        BootstrapFrameDescriptor.write(out, BootstrapFrameDescriptor.CHALLENGE, rootNonce);
        Frame proof = BootstrapFrameDescriptor.read(in, 1024);
        assertArrayEquals(BootstrapFrameDescriptor.proof(token, BootstrapFrameDescriptor.RANK_PROOF_LABEL,
                hello.body(), rootNonce), proof.body(), "the rank proves it knows the token");
        BootstrapFrameDescriptor.write(out, BootstrapFrameDescriptor.WELCOME, BootstrapFrameDescriptor.proof(token,
                BootstrapFrameDescriptor.ROOT_PROOF_LABEL, hello.body(), rootNonce));
        Session session = new Session(s, BootstrapFrameDescriptor.proof(token, BootstrapFrameDescriptor.ROOT_KEY_LABEL,
                hello.body(), rootNonce), BootstrapFrameDescriptor.proof(token,
                BootstrapFrameDescriptor.RANK_KEY_LABEL, hello.body(), rootNonce));
        session.send(BootstrapFrameDescriptor.READY, new byte[0]);
        return session;
    }
}
