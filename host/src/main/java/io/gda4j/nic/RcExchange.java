package io.gda4j.nic;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.IntFunction;

/**
 * How one rank connects RC QPs to the ranks of other processes (and, through the same bytes, of other hosts) over a
 * NIC that connects by QP number, LID/GID and PSN (a ConnectX): the one piece of code ibgda and the proxy's verbs
 * handler share for it. The emulated NIC does not come here: its QPs cannot reach a QP of another process by number
 * (its fabric is the NICs of one JVM), so it connects processes through a {@code RemoteResponder} instead.
 *
 * <p><b>Which QPs.</b> As within one process ({@link Nic#createConnectedPair}, {@link QpPair}), a pair of ranks
 * {@code {L, P}} has one RC connection: a QP on L's NIC and a QP on P's NIC, connected to each other. Each is the
 * requester of its own rank's direction (its rank posts WRITEs, READs and atomics on its send queue) and the
 * responder of the other direction (its NIC answers the peer's requests on it; gda4j posts no receives, so that
 * takes no work from its rank). So L's process creates one QP per other rank, and publishes each QP's endpoint under
 * the other rank of its pair; P's process does the same; each then connects its own QP of the pair to the endpoint
 * the other published under its rank:
 * <pre>
 *   L's process                                   P's process
 *   creates QP(L,P), publishes it as L.table[P]   creates QP(P,L), publishes it as P.table[L]
 *            -------------------- one all-gather of the offers --------------------
 *   QP(L,P): RTR towards P.table[L], then RTS     QP(P,L): RTR towards L.table[P], then RTS
 * </pre>
 * L's WQEs on QP(L,P) reach P's memory through QP(P,L), and P's through QP(P,L) reach L's memory through QP(L,P).
 * Moving to RTR needs nothing of the peer but its endpoint, so both sides connect without a second round; the world
 * meets in a barrier after every pair is connected, so no WQE is posted before both QPs of its pair are in RTR.
 *
 * <p><b>Life cycle</b> (one all-gather, so the QPs must exist before the offers are published):
 * <ol>
 *   <li>{@link #open}, in the transport's offer phase: creates every QP, in RESET; on failure closes those made.</li>
 *   <li>{@link #endpoints()}: the table the transport puts in its offer.</li>
 *   <li>{@link #connect}, after the gather, once per peer the transport serves: takes this side's QP of the pair out
 *       of the exchange (the caller's link owns it from then on) and connects it to the peer's endpoint; on failure
 *       closes that QP.</li>
 *   <li>{@link #close()}: closes every QP no link took: those of pairs another transport serves, and those never
 *       connected because the world failed first.</li>
 * </ol>
 * A QP belongs either to the exchange or to exactly one caller, so nothing is lost and nothing closed twice on
 * failure.
 *
 * <p><b>Several QPs per pair</b> ({@code qpsPerPeer}, ibgda's {@code GDA4J_IBGDA_QPS_PER_PEER}): a pair has that many
 * connections, QP {@code i} of each side connected to QP {@code i} of the other; the table carries this side's QP
 * {@code i} for rank {@code P} under key {@code P * qpsPerPeer + i}, so one QP per pair (the proxy) is keyed by rank
 * as before. Both sides must use the same count: a table of another size is refused, naming the setting.
 *
 * <p>Threads: synchronized; set-up only.
 */
public final class RcExchange implements AutoCloseable {
    private final Nic nic;
    private final int rank;
    private final int worldSize;
    private final int qpsPerPeer;
    /** This side's QPs not yet taken by a link, by key (the other rank of their pair x qpsPerPeer + index). */
    private final Map<Integer, NicQp> waiting;
    private final RcEndpoints endpoints;
    private boolean closed;

    /** How a QP spec is made for the pair with {@code peer}, QP {@code index} of {@code qpsPerPeer}. */
    @FunctionalInterface
    public interface QpSpecs {
        QpSpec specFor(int peer, int index);
    }

    private RcExchange(Nic nic, int rank, int worldSize, int qpsPerPeer, Map<Integer, NicQp> waiting) {
        this.nic = nic;
        this.rank = rank;
        this.worldSize = worldSize;
        this.qpsPerPeer = qpsPerPeer;
        this.waiting = waiting;
        Map<Integer, QpAddress> byRank = new TreeMap<>();
        waiting.forEach((peer, qp) -> byRank.put(peer, qp.address()));
        this.endpoints = new RcEndpoints(byRank);
    }

    /**
     * Creates, on {@code nic}, a QP in RESET for the pair of {@code rank} with every other rank of a world of
     * {@code worldSize} (the world's other ranks live in other processes). A pair that another transport serves
     * keeps its QP unconnected until {@link #close()}.
     *
     * @param specFor the spec of the QP for the pair with a given rank (its label names the pair)
     * @throws NicException (or what the NIC throws) when a QP cannot be created; the ones made before are closed
     */
    public static RcExchange open(Nic nic, int rank, int worldSize, IntFunction<QpSpec> specFor) {
        return open(nic, rank, worldSize, 1, (peer, index) -> specFor.apply(peer));
    }

    /** The same with {@code qpsPerPeer} QPs per pair (see "Several QPs per pair"). */
    public static RcExchange open(Nic nic, int rank, int worldSize, int qpsPerPeer, QpSpecs specs) {
        if (rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException("rank " + rank + " is not in a world of " + worldSize);
        }
        if (qpsPerPeer < 1) {
            throw new IllegalArgumentException("at least one QP per pair, not " + qpsPerPeer);
        }
        if ((long) (worldSize - 1) * qpsPerPeer > RcEndpointsDescriptor.MAX_ENTRIES) {
            throw new IllegalArgumentException("a world of " + worldSize + " ranks with " + qpsPerPeer + " QPs per"
                    + " pair: an offer carries at most " + RcEndpointsDescriptor.MAX_ENTRIES + " RC endpoints");
        }
        Map<Integer, NicQp> made = new TreeMap<>();
        try {
            for (int peer = 0; peer < worldSize; peer++) {
                for (int i = 0; i < qpsPerPeer && peer != rank; i++) {
                    made.put(peer * qpsPerPeer + i, nic.createQp(specs.specFor(peer, i)));
                }
            }
            return new RcExchange(nic, rank, worldSize, qpsPerPeer, made);
        } catch (RuntimeException e) {
            closeNewestFirst(new ArrayList<>(made.values()), e);
            throw e;
        }
    }

    /** The endpoints of this side's QPs, by the other rank of their pair: what the offer carries. */
    public RcEndpoints endpoints() {
        return endpoints;
    }

    /** The NIC the QPs are on. */
    public Nic nic() {
        return nic;
    }

    /**
     * Connects this side's QP of the pair with {@code peerRank} to the endpoint that the peer's process published
     * for this rank, and hands it to the caller, who owns it from then on.
     *
     * @param peerDescription names the peer in messages, e.g. {@code "rank 1 (pid 4242 on node7)"}
     * @param peerEndpoints   what the peer's process published ({@link #endpoints()} there)
     * @throws NicException naming the peer when it published no endpoint for this rank, or the connection fails (the
     *                      QP is closed then); {@link IllegalStateException} when the pair was taken before or the
     *                      exchange is closed
     */
    public synchronized NicQp connect(int peerRank, String peerDescription, RcEndpoints peerEndpoints) {
        return connect(peerRank, 0, peerDescription, peerEndpoints);
    }

    /**
     * The same for QP {@code index} of the pair's {@code qpsPerPeer}.
     *
     * @throws NicException also when the peer publishes another count of QPs per pair (its table's size says so)
     */
    public synchronized NicQp connect(int peerRank, int index, String peerDescription, RcEndpoints peerEndpoints) {
        if (closed) {
            throw new IllegalStateException("rank " + rank + "'s RC exchange on " + nic.description() + " is closed");
        }
        int published = peerEndpoints.byRank().size();
        if (worldSize > 1 && published > 0 && published != (worldSize - 1) * qpsPerPeer
                && published % (worldSize - 1) == 0) {
            throw new NicException(String.format("%s publishes %d QPs per pair of ranks, rank %d %d: set the same"
                            + " QPs per peer (GDA4J_IBGDA_QPS_PER_PEER) in every process of the job", peerDescription,
                    published / (worldSize - 1), rank, qpsPerPeer));
        }
        int key = rank * qpsPerPeer + index;
        QpAddress theirs = peerEndpoints.forRank(key).orElseThrow(() -> new NicException(peerDescription
                + " published no RC endpoint for rank " + rank + (qpsPerPeer > 1 ? " QP " + index : "")
                + " (it has endpoints " + (qpsPerPeer > 1 ? "under keys rank x QPs per pair + QP: " : "for ranks ")
                + peerEndpoints.byRank().keySet() + "): its process does not see the"
                + " same world; start every process of the job with the same gda4j version, world size and transport"
                + " settings"));
        NicQp qp = index < 0 || index >= qpsPerPeer ? null : waiting.remove(peerRank * qpsPerPeer + index);
        if (qp == null) {
            throw new IllegalStateException("rank " + rank + " has no unconnected QP " + index + " for rank "
                    + peerRank + (peerRank == rank || peerRank < 0 || index < 0 || index >= qpsPerPeer ? ""
                    : ": connected to it already"));
        }
        try {
            qp.connect(theirs);
            return qp;
        } catch (RuntimeException e) {
            String why = String.format("rank %d cannot connect its QP 0x%06x (%s, on %s) to %s's %s: %s", rank,
                    qp.qpn(), qp.label(), nic.description(), peerDescription, theirs.describe(), e.getMessage());
            try {
                qp.close();
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw new NicException(why, e);
        }
    }

    /** How many QPs no link has taken yet. */
    public synchronized int waiting() {
        return waiting.size();
    }

    /** Closes every QP no link took, newest first; idempotent. A failure is thrown after every QP was tried. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        List<NicQp> left = new ArrayList<>(waiting.values());
        waiting.clear();
        RuntimeException first = closeNewestFirst(left, null);
        if (first != null) {
            throw first;
        }
    }

    /** Closes every QP, newest first; returns {@code first}, or the first failure, with any later one suppressed. */
    private static RuntimeException closeNewestFirst(List<NicQp> qps, RuntimeException first) {
        for (int i = qps.size() - 1; i >= 0; i--) {
            try {
                qps.get(i).close();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        return first;
    }
}
