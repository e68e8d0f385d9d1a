package io.gda4j.bootstrap;

import static io.gda4j.bootstrap.BootstrapFrameDescriptor.CHALLENGE;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.FAIL;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.HELLO;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.HELLO_LIMIT_BYTES;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.PROOF;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.READY;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.REFUSE;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.WELCOME;

import io.gda4j.bootstrap.BootstrapFrameDescriptor.Frame;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.security.MessageDigest;
import java.util.concurrent.TimeUnit;

/**
 * A member's way into the world: connect to the root (retrying until it listens), say hello, prove the job token
 * and check the root's proof, then wait for READY. A root that drops the attempt before its welcome (its handshake
 * slots were full) is tried again until the join timeout.
 */
final class MemberJoin {
    private static final long CONNECT_RETRY_MILLIS = 100;

    private final BootstrapConfig config;
    private final int rank;
    private final int size;
    private final int replyLimitBytes;

    private MemberJoin(BootstrapConfig config, int replyLimitBytes) {
        this.config = config;
        this.rank = config.rank();
        this.size = config.worldSize();
        this.replyLimitBytes = replyLimitBytes;
    }

    /**
     * Joins as {@code config.rank()}; returns the link to the root once the world is complete, its writer not yet
     * started.
     *
     * @param replyLimitBytes the largest frame the root may send (a full all-gather result)
     * @param failure         hears of a later write failure on the link
     * @throws BootstrapException refused, not a gda4j root, or not complete within the join timeout
     */
    static PeerLink join(BootstrapConfig config, int replyLimitBytes, PeerLink.WriteFailure failure) {
        return new MemberJoin(config, replyLimitBytes).join(failure);
    }

    private PeerLink join(PeerLink.WriteFailure failure) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.joinTimeoutMillis());
        InetSocketAddress root = config.root();
        IOException last = null;
        int dropped = 0;
        while (true) {
            Socket socket = connect(deadline, last);
            try {
                PeerLink link = new PeerLink(0, socket, failure);
                hello(link, deadline);
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
     * Says hello on {@code link} and waits for the world to be complete (READY). An {@link IOException}
     * before the root's welcome means the root dropped this attempt (the caller tries again); a refusal, a timeout or
     * a loss after the welcome is a {@link BootstrapException}.
     */
    private void hello(PeerLink link, long deadline) throws IOException {
        InetSocketAddress root = config.root();
        Socket s = link.socket;
        boolean welcomed = false;
        try {
            byte[] hello = BootstrapFrameDescriptor.hello(rank, size, BootstrapFrameDescriptor.nonce());
            link.sendNow(HELLO, hello);
            byte[] rootNonce = null;
            long readyDeadline = deadline + TimeUnit.MILLISECONDS.toNanos(Bootstrap.MEMBER_GRACE_MILLIS);
            while (true) {
                long left = TimeUnit.NANOSECONDS.toMillis(readyDeadline - System.nanoTime());
                if (left <= 0) {
                    throw new SocketTimeoutException();
                }
                s.setSoTimeout((int) left);
                Frame f = BootstrapFrameDescriptor.read(link.in, welcomed ? replyLimitBytes : HELLO_LIMIT_BYTES);
                if (f.type() == REFUSE) {
                    throw new BootstrapException("the root at " + root + " refused rank " + rank + ": " + f.text());
                } else if (f.type() == FAIL) {
                    throw new BootstrapException(f.text());
                } else if (f.type() == CHALLENGE && rootNonce == null
                        && f.body().length == BootstrapFrameDescriptor.NONCE_BYTES) {
                    rootNonce = f.body();
                    link.sendNow(PROOF, BootstrapFrameDescriptor.proof(config.jobToken(),
                            BootstrapFrameDescriptor.RANK_PROOF_LABEL, hello, rootNonce));
                } else if (f.type() == WELCOME && rootNonce != null && !welcomed) {
                    byte[] expected = BootstrapFrameDescriptor.proof(config.jobToken(),
                            BootstrapFrameDescriptor.ROOT_PROOF_LABEL, hello, rootNonce);
                    if (!MessageDigest.isEqual(f.body(), expected)) {
                        throw new BootstrapException("the process at " + root + " does not know the job token (its "
                                + "proof is wrong): another job's root, or a stranger on that port. Rank " + rank
                                + " sent it nothing secret and stops here.");
                    }
                    welcomed = true;
                } else if (f.type() == READY && welcomed) {
                    break;
                } else {
                    throw new BootstrapException("the root at " + root + " answered rank " + rank
                            + " with frame type " + f.type() + ": is it a gda4j bootstrap of the same version (this"
                            + " process speaks version " + BootstrapFrameDescriptor.VERSION + ")?");
                }
            }
            s.setSoTimeout(0);
        } catch (SocketTimeoutException e) {
            throw new BootstrapException("rank " + rank + ": the world was not complete within "
                    + (config.joinTimeoutMillis() + Bootstrap.MEMBER_GRACE_MILLIS)
                    + " ms (the root names the missing ranks in its own error)", e);
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
