package io.gda4j.bootstrap;

import static io.gda4j.bootstrap.BootstrapFrameDescriptor.COLLECTIVE;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.KIND_BARRIER;
import static io.gda4j.bootstrap.BootstrapFrameDescriptor.RESULT;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The collectives of a {@link Bootstrap} ({@code allGather}, {@code barrier}): at the root, the rounds that gather
 * every rank's part and send the result to all; at a member, the calls waiting for the root's result. Called by the
 * application's thread ({@link #collective}, one at a time), by the connections' reader threads (a part arrives, a
 * result arrives, a rank leaves) and by whichever thread fails the world ({@link #drainWaiting}). Every field is
 * guarded by the bootstrap's lock, which this class shares.
 */
final class Collectives {
    private final Bootstrap world;
    private final BootstrapConfig config;
    private final int rank;
    private final int size;
    private final Object lock;
    /** The bootstrap's links: root, links[r] to rank r; member, links[0] to the root. */
    private final PeerLink[] links;
    /** Root: the rounds not yet full, by sequence number. */
    private final Map<Long, Round> rounds = new HashMap<>();
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
        final byte kind;
        final byte[][] parts = new byte[size][];
        final CompletableFuture<byte[][]> done = new CompletableFuture<>();
        int arrived;

        Round(byte kind) {
            this.kind = kind;
        }

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
        byte[][] result = null;
        synchronized (lock) {
            seq = ++nextSeq;
            if (rank == 0) {
                Round round = contribute(0, seq, kind, mine);
                done = round.done;
                if (round.arrived == size) {
                    result = round.parts;
                }
            } else {
                done = new CompletableFuture<>();
                pending.put(seq, done);
            }
        }
        world.throwIfFailed(); // a failure between the check and the registration did not see this call
        if (result != null) {
            sendResults(seq, result);
            done.complete(result);
        } else if (rank != 0) {
            links[0].send(COLLECTIVE, BootstrapFrameDescriptor.collective(seq, kind, mine));
        }
        try {
            long limitMillis = config.collectiveTimeoutMillis() + (rank == 0 ? 0 : Bootstrap.MEMBER_GRACE_MILLIS);
            return done.get(limitMillis, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            String missing;
            synchronized (lock) {
                Round round = rounds.get(seq);
                missing = round == null ? null : round.missing();
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

    /** Root, rank {@code peer}'s reader: its part of collective {@code seq}; a full round goes out to every rank. */
    void onContribution(int peer, long seq, byte kind, byte[] part) {
        byte[][] full = null;
        Round round;
        synchronized (lock) {
            if (world.failure() != null) {
                return; // the rank has been told with a FAIL or PEER_FAILED
            }
            round = contribute(peer, seq, kind, part);
            if (round.arrived == size) {
                full = round.parts;
            }
        }
        if (full != null) {
            sendResults(seq, full);
            round.done.complete(full);
        }
    }

    /** Member, the root's reader: the result of collective {@code seq} completes the call waiting for it. */
    void onResult(long seq, byte[][] parts) {
        CompletableFuture<byte[][]> waiting;
        synchronized (lock) {
            waiting = pending.remove(seq);
        }
        if (waiting != null) {
            waiting.complete(parts);
        }
    }

    /** Root, under the lock: records rank r's part; the caller sends the results when the round is full. */
    private Round contribute(int r, long seq, byte kind, byte[] part) {
        Round round = rounds.computeIfAbsent(seq, k -> new Round(kind));
        for (int gone = 0; gone < size; gone++) {
            if (left[gone] && round.parts[gone] == null) {
                world.failWorld(leftWorld(gone));
                return round;
            }
        }
        if (round.kind != kind) {
            world.failWorld(new BootstrapException("rank " + r + " entered " + kindName(kind) + " #" + seq
                    + " while another rank entered " + kindName(round.kind) + " #" + seq
                    + ": every process must call the same collectives in the same order"));
            return round;
        }
        if (round.parts[r] != null) {
            world.failWorld(new BootstrapException("rank " + r + " sent " + kindName(kind) + " #" + seq + " twice"));
            return round;
        }
        round.parts[r] = part;
        if (++round.arrived == size) {
            rounds.remove(seq);
        }
        return round;
    }

    /** Under the lock: rank {@code r} said goodbye; a later round that needs it fails when it starts. */
    void recordLeft(int r) {
        left[r] = true;
    }

    /** Root, under the lock: whether an unfinished round still lacks rank {@code r}'s part. */
    boolean roundWaitsFor(int r) {
        for (Round round : rounds.values()) {
            if (round.parts[r] == null) {
                return true;
            }
        }
        return false;
    }

    BootstrapException leftWorld(int gone) {
        return new BootstrapException("rank " + gone + " closed its bootstrap; rank " + rank
                + " cannot run collectives without it");
    }

    /** Under the lock, as the world fails: moves every waiting call into {@code waiting} and forgets it. */
    void drainWaiting(List<CompletableFuture<byte[][]>> waiting) {
        waiting.addAll(pending.values());
        pending.clear();
        for (Round r : rounds.values()) {
            waiting.add(r.done);
        }
        rounds.clear();
    }

    /** Root: the full round goes to every rank; whoever filled the round then completes the root's own call. */
    private void sendResults(long seq, byte[][] parts) {
        byte[] body = BootstrapFrameDescriptor.result(seq, parts);
        for (int r = 1; r < size; r++) {
            links[r].send(RESULT, body); // queued: a rank that stopped reading holds up no one else
        }
    }
}
