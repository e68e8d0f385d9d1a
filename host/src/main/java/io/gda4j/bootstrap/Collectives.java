package io.gda4j.bootstrap;

import static io.gda4j.bootstrap.BootstrapFrameDescriptor.COLLECTIVE;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.KIND_ALL_GATHER;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.KIND_BARRIER;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.RESULT;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The collectives of a {@link Bootstrap} ({@code allGather}, {@code barrier}): at the root, the one round that
 * gathers every rank's part and sends the result to all; at a member, the calls waiting for the root's result.
 * Called by the application's thread ({@link #collective}, one at a time), by the connections' reader threads (a
 * part arrives, a result arrives, a rank leaves) and by whichever thread fails the world ({@link #drainWaiting}).
 * Every field is guarded by the bootstrap's lock, which this class shares.
 *
 * <p>The root holds at most one round: a rank may give only its part of the next collective, once, of a known kind
 * and within the size limit; anything else is that rank breaking the protocol, and the caller fails it at once
 * ({@link #onContribution} returns why). So a rank, honest or not, can make the root hold no more than one world's
 * worth of parts.
 */
final class Collectives {
    private final Bootstrap world;
    private final BootstrapConfig config;
    private final int rank;
    private final int size;
    private final Object lock;
    /** The bootstrap's links: root, links[r] to rank r; member, links[0] to the root. */
    private final PeerLink[] links;
    /** Root: the collective not yet full, or null. */
    private Round open;
    /** Root: the sequence number of the last collective whose result went out. */
    private long completed;
    /** Member: the calls waiting for the root's result, by sequence number. */
    private final Map<Long, CompletableFuture<byte[][]>> pending = new HashMap<>();
    /** Root: ranks that said goodbye; a collective that would need one of them fails (under lock). */
    private final boolean[] left;
    private long nextSeq;

    Collectives(Bootstrap world, BootstrapConfig config, Object lock, PeerLink[] links) {
        this.world = world;
        this.config = config;
        this.rank = config.rank();
        this.size = config.worldSize();
        this.lock = lock;
        this.links = links;
        this.left = new boolean[size];
    }

    /** The contributions of one collective at the root, until every rank has given its part. */
    private final class Round {
        final long seq;
        final byte kind;
        final byte[][] parts = new byte[size][];
        final CompletableFuture<byte[][]> done = new CompletableFuture<>();
        int arrived;

        Round(long seq, byte kind) {
            this.seq = seq;
            this.kind = kind;
        }

        /** Under the lock. */
        String missing() {
            StringJoiner j = new StringJoiner(", ");
            for (int r = 0; r < size; r++) {
                if (parts[r] == null) {
                    j.add(Integer.toString(r));
                }
            }
            return j.toString();
        }
    }

    private static String kindName(byte kind) {
        return kind == KIND_BARRIER ? "barrier" : "all-gather";
    }

    /** The application's thread: runs one collective of {@code kind} with this rank's part {@code mine}. */
    byte[][] collective(byte kind, byte[] mine) {
        world.throwIfFailed();
        long seq;
        CompletableFuture<byte[][]> done;
        Round round = null;
        boolean full = false;
        synchronized (lock) {
            seq = ++nextSeq;
            if (rank == 0) {
                round = add(0, seq, kind, mine);
                done = round == null ? null : round.done;
                full = round != null && round.arrived == size;
            } else {
                done = new CompletableFuture<>();
                pending.put(seq, done);
            }
        }
        world.throwIfFailed(); // a failure between the check and the registration did not see this call
        if (full) {
            finish(round);
        } else if (rank != 0) {
            byte[] head = ByteBuffer.allocate(BootstrapFrameDescriptor.COLLECTIVE_PART_OFFSET).putLong(seq).put(kind)
                    .array();
            links[0].send(COLLECTIVE, head, mine); // mine is the caller's copy: the writer sends it as it is
        }
        try {
            long limitMillis = config.collectiveTimeoutMillis() + (rank == 0 ? 0 : Bootstrap.MEMBER_GRACE_MILLIS);
            byte[][] parts = done.get(limitMillis, TimeUnit.MILLISECONDS);
            // the root's parts are still being written to the ranks: the caller gets its own copy
            return rank == 0 ? copy(parts) : parts;
        } catch (TimeoutException e) {
            String missing = null;
            if (round != null) {
                synchronized (lock) {
                    missing = round.missing();
                }
            }
            BootstrapException failed = rank == 0
                    ? new BootstrapException(kindName(kind) + " #" + seq + ": rank(s) " + missing
                    + " did not arrive within " + config.collectiveTimeoutMillis() + " ms")
                    : new BootstrapException("rank " + rank + ": " + kindName(kind) + " #" + seq
                    + " got no answer from the root within "
                    + (config.collectiveTimeoutMillis() + Bootstrap.MEMBER_GRACE_MILLIS)
                    + " ms (the root names the ranks that did not arrive)");
            world.failWorld(failed);
            throw failed;
        } catch (ExecutionException e) {
            throw world.rethrown(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BootstrapException("rank " + rank + ": interrupted in " + kindName(kind) + " #" + seq, e);
        }
    }

    private static byte[][] copy(byte[][] parts) {
        byte[][] c = new byte[parts.length][];
        for (int r = 0; r < parts.length; r++) {
            c[r] = parts[r].clone();
        }
        return c;
    }

    /**
     * Root, rank {@code peer}'s reader: its part of collective {@code seq}; a full round goes out to every rank.
     *
     * @return null, or how the rank broke the protocol: the caller fails it
     */
    String onContribution(int peer, long seq, byte kind, byte[] part) {
        Round full = null;
        synchronized (lock) {
            if (world.failure() != null) {
                return null; // the rank has been told with a FAIL or PEER_FAILED
            }
            long next = completed + 1;
            if (seq != next) {
                return "sent its part of collective #" + seq + " while the next collective is #" + next
                        + " (a rank gives its part of each collective once, in order)";
            }
            if (kind != KIND_ALL_GATHER && kind != KIND_BARRIER) {
                return "sent a part of collective #" + seq + " of kind " + kind + ", neither all-gather nor barrier";
            }
            if (kind == KIND_BARRIER && part.length != 0) {
                return "sent " + part.length + " bytes for barrier #" + seq + ", which carries none";
            }
            if (part.length > config.maxMessageBytes()) {
                return "sent " + part.length + " bytes for all-gather #" + seq + ", over the limit of "
                        + config.maxMessageBytes() + " (BootstrapConfig.maxMessageBytes)";
            }
            if (open != null && open.parts[peer] != null) {
                return "sent its part of " + kindName(kind) + " #" + seq + " twice";
            }
            Round round = add(peer, seq, kind, part);
            if (round != null && round.arrived == size) {
                full = round;
            }
        }
        if (full != null) {
            finish(full);
        }
        return null;
    }

    /**
     * Member, the root's reader: the result of collective {@code seq} completes the call waiting for it.
     *
     * @return null, or how the root broke the protocol (a result no call waits for)
     */
    String onResult(long seq, byte[][] parts) {
        CompletableFuture<byte[][]> waiting;
        synchronized (lock) {
            waiting = pending.remove(seq);
            if (waiting == null) {
                return world.failure() != null ? null : "sent the result of collective #" + seq
                        + ", which no call of rank " + rank + " waits for";
            }
        }
        waiting.complete(parts);
        return null;
    }

    /**
     * Root, under the lock: records rank r's valid part of the next collective; null when that fails the world (a
     * rank it needs left, or ranks entered different kinds). The caller sends the results when the round is full.
     */
    private Round add(int r, long seq, byte kind, byte[] part) {
        if (open == null) {
            open = new Round(seq, kind);
        }
        Round round = open;
        for (int gone = 0; gone < size; gone++) {
            if (left[gone] && round.parts[gone] == null) {
                world.failWorld(leftWorld(gone));
                return null;
            }
        }
        if (round.kind != kind) {
            world.failWorld(new BootstrapException("rank " + r + " entered " + kindName(kind) + " #" + seq
                    + " while another rank entered " + kindName(round.kind) + " #" + seq
                    + ": every process must call the same collectives in the same order"));
            return null;
        }
        round.parts[r] = part;
        if (++round.arrived == size) {
            open = null;
            completed = seq;
        }
        return round;
    }

    /** Under the lock: rank {@code r} said goodbye; a later round that needs it fails when it starts. */
    void recordLeft(int r) {
        left[r] = true;
    }

    /** Root, under the lock: whether the unfinished round still lacks rank {@code r}'s part. */
    boolean roundWaitsFor(int r) {
        return open != null && open.parts[r] == null;
    }

    BootstrapException leftWorld(int gone) {
        return new BootstrapException("rank " + gone + " closed its bootstrap; rank " + rank
                + " cannot run collectives without it");
    }

    /** Under the lock, as the world fails: moves every waiting call into {@code waiting} and forgets it. */
    void drainWaiting(List<CompletableFuture<byte[][]>> waiting) {
        waiting.addAll(pending.values());
        pending.clear();
        if (open != null) {
            waiting.add(open.done);
            open = null;
        }
    }

    /**
     * Root: the full round goes to every rank, its parts shared by every rank's frame, not copied (queued: a rank
     * that stopped reading holds up no one else); then the root's own call completes.
     */
    private void finish(Round round) {
        byte[][] segments = BootstrapFrameDescriptor.resultSegments(round.seq, round.parts);
        for (int r = 1; r < size; r++) {
            links[r].send(RESULT, segments);
        }
        round.done.complete(round.parts);
    }
}
