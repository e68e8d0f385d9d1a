package io.gda4j.bootstrap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gda4j.bootstrap.BootstrapFrameDescriptor.Frame;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;

/** The bootstrap's handshake by hand, for tests that play a rank or the root with a bare socket. */
final class RawRank {
    private RawRank() {
    }

    /** Says hello as {@code rank} and answers the challenge; returns the root's answer (WELCOME or REFUSE). */
    static Frame knock(Socket s, int rank, int size, String token) throws IOException {
        OutputStream out = s.getOutputStream();
        InputStream in = s.getInputStream();
        byte[] hello = BootstrapFrameDescriptor.hello(rank, size, BootstrapFrameDescriptor.nonce());
        BootstrapFrameDescriptor.write(out, BootstrapFrameDescriptor.HELLO, hello);
        Frame challenge = BootstrapFrameDescriptor.read(in, 1024);
        if (challenge.type() != BootstrapFrameDescriptor.CHALLENGE) {
            return challenge;
        }
        BootstrapFrameDescriptor.write(out, BootstrapFrameDescriptor.PROOF, BootstrapFrameDescriptor.proof(token,
                BootstrapFrameDescriptor.RANK_PROOF_LABEL, hello, challenge.body()));
        Frame answer = BootstrapFrameDescriptor.read(in, 1024);
        if (answer.type() == BootstrapFrameDescriptor.WELCOME) {
            assertArrayEquals(BootstrapFrameDescriptor.proof(token, BootstrapFrameDescriptor.ROOT_PROOF_LABEL, hello,
                    challenge.body()), answer.body(), "the root proves it knows the token");
        }
        return answer;
    }

    /** Joins as {@code rank}: welcomed, then READY once the world is complete. */
    static void join(Socket s, int rank, int size, String token) throws IOException {
        Frame answer = knock(s, rank, size, token);
        assertEquals(BootstrapFrameDescriptor.WELCOME, answer.type(), answer.text());
        assertEquals(BootstrapFrameDescriptor.READY, BootstrapFrameDescriptor.read(s.getInputStream(), 64).type());
    }

    /** Plays the root for one rank that knows {@code token}: challenge, welcome with the root's proof, READY. */
    static void welcome(Socket s, String token) throws IOException {
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
        BootstrapFrameDescriptor.write(out, BootstrapFrameDescriptor.READY, new byte[0]);
    }
}
