package io.gda4j.bootstrap;

import static io.gda4j.bootstrap.BootstrapFrameDescriptor.CHALLENGE;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.FAIL;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.HELLO;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.HELLO_LIMIT_BYTES;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.PROOF;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.READY;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.REASON_FRAME_LIMIT_BYTES;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.REFUSE;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.SEALED_REFUSE;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.WELCOME;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.concurrent.TimeUnit;

/**
 * A member's way into the world: connect to the root (retrying until it listens), say hello, prove the job token
 * and check the root's proof, authenticate the link with the session keys, then wait for READY. A root that drops
 * the attempt before its welcome (its handshake slots were full) is tried again until the join timeout. A refusal
 * after the proof is sealed: this rank reads it with the token, or, unable to, knows its token is not the root's.
 */
final class MemberJoin {
    private static final long CONNECT_RETRY_MILLIS = 100;

    private final BootstrapConfig config;
    private final int rank;
    private final int size;

    private MemberJoin(BootstrapConfig config) {
        this.config = config;
        this.rank = config.rank();
        this.size = config.worldSize();
    }

    /**
     * Joins as {@code config.rank()}; returns the link to the root once the world is complete, its writer not yet
     * started.
     *
     * @param failure         hears of a later write failure on the link
     * @throws BootstrapException refused, not a gda4j root, or not complete within the join timeout
     */
    static PeerLink join(BootstrapConfig config, PeerLink.WriteFailure failure) {
        return new MemberJoin(config).join(failure);
    }

    private PeerLink join(PeerLink.WriteFailure failure) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.joinTimeoutMillis());
        InetSocketAddress root = config.root();
        IOException last = null;
        int dropped = 0;
        while (true) {
            // made before connecting, and sent before anything else is loaded: the root's first-frame deadline is short
            byte[] hello = BootstrapFrameDescriptor.hello(rank, size, BootstrapFrameDescriptor.nonce());
            Socket socket = connect(deadline, last);
            try {
                BootstrapFrameDescriptor.write(socket.getOutputStream(), HELLO, hello);
                PeerLink link = new PeerLink(0, socket, failure);
                hello(link, hello, deadline);
                return link;
            } catch (IOException e) {
                // Dropped before the welcome: the root's handshake slots were full (strangers, a flood) or a
                // stranger's hello held them; the root has not registered this rank, so knocking again is safe.
                PeerLink.closeQuietly(socket);
                last = e;
                dropped++;
                if (System.nanoTime() - deadline >= 0) {
                    throw new BootstrapException("rank " + rank + ": the root at " + root + " dropped its hello "
                            + dropped + " time(s) until the join timeout of " + config.joinTimeoutMillis()
                            + " ms (last: " + e.getMessage() + "): is the root flooded with connections?", e);
                }
                sleep(CONNECT_RETRY_MILLIS);
            } catch (RuntimeException e) {
                PeerLink.closeQuietly(socket);
                throw e;
            }
        }
    }

    /** Connects to the root, retrying until it listens; throws at {@code deadline} naming the last error. */
    private Socket connect(long deadline, IOException previous) {
        InetSocketAddress root = config.root();
        IOException last = previous;
        while (true) {
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (left <= 0) {
                throw new BootstrapException("rank " + rank + " could not reach the root at " + root + " within "
                        + config.joinTimeoutMillis() + " ms (" + (last == null ? "no answer" : last.getMessage())
                        + "): is rank 0 running and is the address right?", last);
            }
            Socket attempt = new Socket();
            try {
                InetSocketAddress resolved = root.isUnresolved()
                        ? new InetSocketAddress(root.getHostString(), root.getPort()) : root;
                attempt.connect(resolved, (int) Math.max(1, left));
                attempt.setTcpNoDelay(true);
                return attempt;
            } catch (IOException e) {
                last = e;
                PeerLink.closeQuietly(attempt);
                sleep(CONNECT_RETRY_MILLIS); // the root may not listen yet
            }
        }
    }

    /**
     * Goes on from the hello sent on {@code link} and waits for the world to be complete (READY). An
     * {@link IOException} before the root's welcome means the root dropped this attempt (the caller tries again); a
     * refusal, a timeout or a loss after the welcome is a {@link BootstrapException}.
     */
    private void hello(PeerLink link, byte[] hello, long deadline) throws IOException {
        InetSocketAddress root = config.root();
        Socket s = link.socket;
        String token = config.jobToken();
        boolean welcomed = false;
        try {
            byte[] rootNonce = null;
            long readyDeadline = deadline + TimeUnit.MILLISECONDS.toNanos(Bootstrap.MEMBER_GRACE_MILLIS);
            while (true) {
                long left = TimeUnit.NANOSECONDS.toMillis(readyDeadline - System.nanoTime());
                if (left <= 0) {
                    throw new SocketTimeoutException();
                }
                s.setSoTimeout((int) left);
                byte type = link.in.begin(welcomed ? REASON_FRAME_LIMIT_BYTES : HELLO_LIMIT_BYTES);
                byte[] body = link.in.readRest();
                link.in.end();
                if (type == REFUSE && rootNonce == null) {
                    throw new BootstrapException("the root at " + root + " refused rank " + rank + ": "
                            + new String(body, StandardCharsets.UTF_8));
                } else if (type == SEALED_REFUSE && rootNonce != null && !welcomed) {
                    String why = BootstrapFrameDescriptor.openRefusal(BootstrapFrameDescriptor.proof(token,
                            BootstrapFrameDescriptor.REFUSAL_KEY_LABEL, hello, rootNonce), body);
                    throw new BootstrapException("the root at " + root + " refused rank " + rank + ": " + (why != null
                            ? why : "wrong job token: its refusal is sealed with a token this process does not have "
                            + "(another job's root, or " + LaunchEnvironment.GDA4J_JOB_TOKEN + " or the launcher's "
                            + "job id differs from rank 0's)"));
                } else if (type == CHALLENGE && rootNonce == null
                        && body.length == BootstrapFrameDescriptor.NONCE_BYTES) {
                    rootNonce = body;
                    link.sendNow(PROOF, BootstrapFrameDescriptor.proof(token,
                            BootstrapFrameDescriptor.RANK_PROOF_LABEL, hello, rootNonce));
                } else if (type == WELCOME && rootNonce != null && !welcomed) {
                    byte[] expected = BootstrapFrameDescriptor.proof(token,
                            BootstrapFrameDescriptor.ROOT_PROOF_LABEL, hello, rootNonce);
                    if (!MessageDigest.isEqual(body, expected)) {
                        throw new BootstrapException("the process at " + root + " does not know the job token (its "
                                + "proof is wrong): another job's root, or a stranger on that port. Rank " + rank
                                + " sent it nothing secret and stops here.");
                    }
                    link.authenticate(BootstrapFrameDescriptor.proof(token, BootstrapFrameDescriptor.RANK_KEY_LABEL,
                            hello, rootNonce), BootstrapFrameDescriptor.proof(token,
                            BootstrapFrameDescriptor.ROOT_KEY_LABEL, hello, rootNonce));
                    welcomed = true;
                } else if (type == READY && welcomed && body.length == 0) {
                    break;
                } else if (type == FAIL && welcomed) {
                    throw new BootstrapException(new String(body, StandardCharsets.UTF_8));
                } else {
                    throw new BootstrapException("the root at " + root + " answered rank " + rank
                            + " with frame type " + type + ": is it a gda4j bootstrap of the same version (this"
                            + " process speaks version " + BootstrapFrameDescriptor.VERSION + ")?");
                }
            }
            s.setSoTimeout(0);
        } catch (SocketTimeoutException e) {
            throw new BootstrapException("rank " + rank + ": the world was not complete within "
                    + (config.joinTimeoutMillis() + Bootstrap.MEMBER_GRACE_MILLIS)
                    + " ms (the root names the missing ranks in its own error)", e);
        } catch (BootstrapFrameDescriptor.IntegrityException e) {
            throw new BootstrapException("rank " + rank + ": a frame from the root at " + root + " failed its "
                    + "integrity check while joining (" + e.getMessage() + ")", e);
        } catch (BootstrapFrameDescriptor.FrameException e) {
            throw new BootstrapException("the process at " + root + " is not a gda4j bootstrap root (" + e.getMessage()
                    + "): is another program listening on that port, or is " + LaunchEnvironment.GDA4J_ROOT
                    + " (or MASTER_ADDR/MASTER_PORT) wrong?", e);
        } catch (IOException e) {
            if (!welcomed) {
                throw e;
            }
            throw new BootstrapException("rank " + rank + " lost the root at " + root + " while joining: "
                    + e.getMessage(), e);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
