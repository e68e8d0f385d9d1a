package io.gda4j.world;

import io.gda4j.bootstrap.Bootstrap;
import io.gda4j.nic.QpAddress;
import io.gda4j.verbs.Gid;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

/**
 * The QP exchange of ibgda between hosts, on the bootstrap's all-gather: each process publishes, for every peer, the
 * RC QP it created toward that peer and where that peer may write into its heap (layout: {@link QpOfferDescriptor});
 * each process then takes from every peer's list the one offer made to it. One all-gather for the whole world,
 * rather than a message per pair: the bootstrap is a star, and n all-gathers would cost n round trips through
 * the root.
 *
 * <p>Not yet used by {@link ProcessWorld}, which refuses processes on different hosts: the exchange is built and
 * tested on its own (no machine here has an RDMA NIC, let alone two hosts).
 */
public final class QpExchange {
    private QpExchange() {
    }

    /**
     * One side's half of a connection, as offered to {@code peer}.
     *
     * @param peer      the rank this offer is for
     * @param qp        the QP this side created toward {@code peer}
     * @param rkey      the remote key of this side's heap
     * @param heapBase  this side's heap base, as the NIC addresses it
     * @param heapBytes this side's heap size
     */
    public record Offer(int peer, QpAddress qp, int rkey, long heapBase, long heapBytes) {
    }

    /**
     * Publishes {@code offers} (one per peer) and returns, indexed by rank, the offer each peer made to
     * {@code rank} (null at {@code rank} itself).
     *
     * @throws WorldSetupException naming the rank whose list is malformed or lacks an offer for {@code rank}
     */
    public static Offer[] exchange(Bootstrap bootstrap, List<Offer> offers) {
        byte[][] published = bootstrap.allGather(encode(bootstrap.rank(), offers));
        return offersTo(bootstrap.rank(), published);
    }

    static byte[] encode(int rank, List<Offer> offers) {
        List<byte[]> names = new ArrayList<>();
        int length = QpOfferDescriptor.HEADER_BYTES;
        Set<Integer> peers = new HashSet<>();
        for (Offer o : offers) {
            if (!peers.add(o.peer()) || o.peer() == rank) {
                throw new IllegalArgumentException("rank " + rank + " offers "
                        + (o.peer() == rank ? "a QP to itself" : "two QPs to rank " + o.peer()));
            }
            byte[] name = o.qp().device().getBytes(StandardCharsets.UTF_8);
            if (name.length > QpOfferDescriptor.MAX_NAME_BYTES) {
                throw new IllegalArgumentException("device name of " + name.length + " bytes: at most "
                        + QpOfferDescriptor.MAX_NAME_BYTES);
            }
            names.add(name);
            length += QpOfferDescriptor.OFFER_BYTES + name.length;
        }
        ByteBuffer b = ByteBuffer.allocate(length);
        b.putInt(QpOfferDescriptor.MAGIC).putShort(QpOfferDescriptor.VERSION).putShort((short) offers.size())
                .putInt(rank);
        for (int i = 0; i < offers.size(); i++) {
            Offer o = offers.get(i);
            b.putInt(o.peer()).putInt(o.qp().qpn()).putInt(o.qp().psn()).putShort((short) o.qp().lid())
                    .put(o.qp().gid().raw()).putInt(o.rkey()).putLong(o.heapBase()).putLong(o.heapBytes())
                    .putShort((short) names.get(i).length).put(names.get(i));
        }
        return b.array();
    }

    /** From every rank's published list, the offer made to {@code me}. */
    static Offer[] offersTo(int me, byte[][] published) {
        Offer[] mine = new Offer[published.length];
        List<String> problems = new ArrayList<>();
        for (int r = 0; r < published.length; r++) {
            if (r == me) {
                continue;
            }
            try {
                TreeMap<Integer, Offer> byPeer = decode(r, published[r], published.length);
                mine[r] = byPeer.get(me);
                if (mine[r] == null) {
                    problems.add("rank " + r + " offered no QP to rank " + me + " (it offered to ranks "
                            + byPeer.keySet() + ")");
                }
            } catch (IllegalArgumentException | BufferUnderflowException e) {
                problems.add("rank " + r + "'s QP offers of " + published[r].length + " bytes are malformed: "
                        + e.getMessage());
            }
        }
        if (!problems.isEmpty()) {
            throw new WorldSetupException("the ibgda QP exchange failed at rank " + me + ": "
                    + String.join("; ", problems) + ". Every process of the job must run the same gda4j version");
        }
        return mine;
    }

    private static TreeMap<Integer, Offer> decode(int from, byte[] bytes, int worldSize) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        if (b.getInt() != QpOfferDescriptor.MAGIC || b.getShort() != QpOfferDescriptor.VERSION) {
            throw new IllegalArgumentException("not QP offers of version " + QpOfferDescriptor.VERSION);
        }
        int count = Short.toUnsignedInt(b.getShort());
        int rank = b.getInt();
        if (rank != from) {
            throw new IllegalArgumentException("they say they are rank " + rank);
        }
        TreeMap<Integer, Offer> byPeer = new TreeMap<>();
        for (int i = 0; i < count; i++) {
            int peer = b.getInt();
            int qpn = b.getInt();
            int psn = b.getInt();
            int lid = Short.toUnsignedInt(b.getShort());
            byte[] gid = new byte[QpOfferDescriptor.GID_BYTES];
            b.get(gid);
            int rkey = b.getInt();
            long base = b.getLong();
            long size = b.getLong();
            int nameLength = Short.toUnsignedInt(b.getShort());
            if (nameLength > QpOfferDescriptor.MAX_NAME_BYTES) {
                throw new IllegalArgumentException("a device name of " + nameLength + " bytes");
            }
            byte[] name = new byte[nameLength];
            b.get(name);
            if (peer < 0 || peer >= worldSize || peer == from) {
                throw new IllegalArgumentException("an offer to rank " + peer + " in a world of " + worldSize);
            }
            Offer o = new Offer(peer, new QpAddress(new String(name, StandardCharsets.UTF_8), qpn, lid, Gid.of(gid),
                    psn), rkey, base, size);
            if (byPeer.put(peer, o) != null) {
                throw new IllegalArgumentException("two offers to rank " + peer);
            }
        }
        if (b.hasRemaining()) {
            throw new IllegalArgumentException(b.remaining() + " bytes after the last offer");
        }
        return byPeer;
    }
}
