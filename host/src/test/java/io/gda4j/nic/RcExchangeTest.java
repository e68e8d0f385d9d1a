package io.gda4j.nic;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.verbs.Gid;
import io.gda4j.verbs.VerbsConstants;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The RC endpoint exchange against a recording NIC (no RDMA device): each process's QPs exist before its offer is
 * published, each QP is connected to exactly the endpoint the peer published for its rank (QPN, PSN, LID and GID
 * bytes), the two QPs of a pair point at each other, and a failure at any step leaves no QP open.
 */
@Timeout(10)
class RcExchangeTest {
    /** A NIC of one "process" of the job: its QPs record what they were connected to. */
    static final class RecordingNic implements Nic {
        final String device;
        final int lid;
        final byte[] gid;
        final List<RecordingQp> made = new ArrayList<>();
        /** The creation that fails (1-based), or 0. */
        int failCreation;
        /** QP numbers whose connect fails. */
        final Set<Integer> failConnect = new HashSet<>();
        int nextQpn;

        RecordingNic(String device, int lid, int firstQpn, byte[] gid) {
            this.device = device;
            this.lid = lid;
            this.nextQpn = firstQpn;
            this.gid = gid;
        }

        @Override
        public String name() {
            return MLX5;
        }

        @Override
        public String description() {
            return device + " port 1 (recording)";
        }

        @Override
        public NicCapabilities capabilities() {
            return new NicCapabilities(1 << 15, 1 << 16, 256, true, true, true, false, true, false);
        }

        @Override
        public NicMemory registerMemory(MemoryRegistration request) {
            throw new UnsupportedOperationException();
        }

        @Override
        public NicMemory nullMemory() {
            throw new UnsupportedOperationException();
        }

        @Override
        public NicQp createQp(QpSpec spec) {
            if (made.size() + 1 == failCreation) {
                throw new NicException(spec.label() + ": out of QPs (injected)");
            }
            RecordingQp qp = new RecordingQp(this, spec.label(), nextQpn++, (0x5000 + nextQpn * 7) & 0xffffff);
            made.add(qp);
            return qp;
        }

        long open() {
            return made.stream().filter(q -> q.closes == 0).count();
        }

        @Override
        public void close() {
        }
    }

    static final class RecordingQp implements NicQp {
        final RecordingNic nic;
        final String label;
        final int qpn;
        final int psn;
        QpAddress connectedTo;
        int closes;

        RecordingQp(RecordingNic nic, String label, int qpn, int psn) {
            this.nic = nic;
            this.label = label;
            this.qpn = qpn;
            this.psn = psn;
        }

        @Override
        public int qpn() {
            return qpn;
        }

        @Override
        public String label() {
            return label;
        }

        @Override
        public Nic nic() {
            return nic;
        }

        @Override
        public QpAddress address() {
            return new QpAddress(nic.device, 1, VerbsConstants.IBV_LINK_LAYER_ETHERNET, qpn, psn, nic.lid,
                    Gid.of(nic.gid), VerbsConstants.IBV_MTU_4096);
        }

        @Override
        public void connect(QpAddress peer) {
            if (closes != 0 || connectedTo != null) {
                throw new IllegalStateException(label + " connected twice or after close");
            }
            if (nic.failConnect.contains(qpn)) {
                throw new NicException("ibv_modify_qp(INIT -> RTR) failed: Invalid argument (injected)");
            }
            connectedTo = peer;
        }

        @Override
        public QpState state() {
            return closes != 0 ? QpState.RESET : connectedTo == null ? QpState.RESET : QpState.RTS;
        }

        @Override
        public QpRings deviceRings() {
            throw new UnsupportedOperationException();
        }

        @Override
        public QpRings hostRings() {
            throw new UnsupportedOperationException();
        }

        @Override
        public void close() {
            closes++;
        }
    }

    static byte[] gid(int host) {
        byte[] g = new byte[16];
        g[10] = (byte) 0xff;
        g[11] = (byte) 0xff;
        g[12] = 10;
        g[15] = (byte) host;
        return g;
    }

    /** Rank {@code r}'s process: its own NIC, with QP numbers and GID of its own. */
    static RecordingNic nicOf(int r) {
        return new RecordingNic("mlx5_" + r, 0, 0x100 * (r + 1), gid(r + 1));
    }

    static RcExchange open(RecordingNic nic, int rank, int worldSize) {
        return RcExchange.open(nic, rank, worldSize, peer -> QpSpec.of(null, 64, "rank " + rank + " -> rank " + peer));
    }

    @Test
    void eachQpIsMovedToRtrTowardsExactlyTheEndpointThePeerPublishedForItsRank() {
        int n = 3;
        RecordingNic[] nics = new RecordingNic[n];
        RcExchange[] exchanges = new RcExchange[n];
        byte[][] published = new byte[n][];
        for (int r = 0; r < n; r++) {
            nics[r] = nicOf(r);
            exchanges[r] = open(nics[r], r, n);
            // The offer phase: every QP exists, in RESET, before the bytes go round.
            assertEquals(n - 1, nics[r].made.size());
            assertTrue(nics[r].made.stream().allMatch(q -> q.connectedTo == null));
            published[r] = exchanges[r].endpoints().encode();
        }
        // After the all-gather each process connects its side of every pair from the peer's bytes alone.
        NicQp[][] links = new NicQp[n][n];
        for (int r = 0; r < n; r++) {
            for (int p = 0; p < n; p++) {
                if (p != r) {
                    links[r][p] = exchanges[r].connect(p, "rank " + p, RcEndpoints.decode("rank " + p, published[p]));
                }
            }
            assertEquals(0, exchanges[r].waiting(), "every QP was taken by a link");
        }
        for (int r = 0; r < n; r++) {
            for (int p = 0; p < n; p++) {
                if (p == r) {
                    continue;
                }
                RecordingQp mine = (RecordingQp) links[r][p];
                RecordingQp theirs = (RecordingQp) links[p][r];
                assertSame(nics[r], mine.nic, "rank " + r + "'s side of the pair is on its own NIC");
                assertEquals("rank " + r + " -> rank " + p, mine.label);
                QpAddress at = mine.connectedTo;
                assertEquals(theirs.qpn, at.qpn(), "dest_qp_num: the peer's QP of this pair");
                assertEquals(theirs.psn, at.psn(), "rq_psn: the PSN the peer's QP starts sending with");
                assertEquals(0, at.lid());
                assertArrayEquals(gid(p + 1), at.gid().raw(), "dgid: the peer's GID, byte for byte");
                assertEquals("mlx5_" + p, at.device());
                assertEquals(VerbsConstants.IBV_MTU_4096, at.pathMtu());
                assertEquals(theirs.address(), at, "nothing else was changed on the way");
                assertEquals(mine.qpn, theirs.connectedTo.qpn(), "the pair's two QPs point at each other");
            }
        }
        for (RcExchange x : exchanges) {
            x.close();
        }
        for (RecordingNic nic : nics) {
            assertEquals(n - 1, nic.open(), "links own their QPs: closing the exchange leaves them open");
        }
    }

    @Test
    void withSeveralQpsPerPairQpIOfEachSideIsConnectedToQpIOfTheOther() {
        int n = 3;
        int qps = 2;
        RecordingNic[] nics = new RecordingNic[n];
        RcExchange[] exchanges = new RcExchange[n];
        byte[][] published = new byte[n][];
        for (int r = 0; r < n; r++) {
            nics[r] = nicOf(r);
            int rank = r;
            exchanges[r] = RcExchange.open(nics[r], r, n, qps, (peer, i) -> QpSpec.of(null, 64, "rank " + rank
                    + " -> rank " + peer + " QP " + i));
            assertEquals((n - 1) * qps, nics[r].made.size());
            published[r] = exchanges[r].endpoints().encode();
        }
        NicQp[][][] links = new NicQp[n][n][qps];
        for (int r = 0; r < n; r++) {
            for (int p = 0; p < n; p++) {
                for (int i = 0; i < qps && p != r; i++) {
                    links[r][p][i] = exchanges[r].connect(p, i, "rank " + p, RcEndpoints.decode("rank " + p,
                            published[p]));
                }
            }
            assertEquals(0, exchanges[r].waiting());
        }
        for (int r = 0; r < n; r++) {
            for (int p = 0; p < n; p++) {
                for (int i = 0; i < qps && p != r; i++) {
                    RecordingQp mine = (RecordingQp) links[r][p][i];
                    RecordingQp theirs = (RecordingQp) links[p][r][i];
                    assertEquals("rank " + r + " -> rank " + p + " QP " + i, mine.label);
                    assertEquals(theirs.address(), mine.connectedTo, "QP " + i + " to the peer's QP " + i);
                    assertEquals(mine.qpn, theirs.connectedTo.qpn());
                }
            }
        }
        for (RcExchange x : exchanges) {
            x.close();
        }
    }

    @Test
    void aPeerWithAnotherCountOfQpsPerPairIsRefusedNamingTheSetting() {
        RecordingNic nic0 = nicOf(0);
        RecordingNic nic1 = nicOf(1);
        RcExchange two = RcExchange.open(nic0, 0, 3, 2, (peer, i) -> QpSpec.of(null, 64, "0 -> " + peer + " " + i));
        RcExchange one = open(nic1, 1, 3);
        NicException e = assertThrows(NicException.class, () -> two.connect(1, 0, "rank 1", one.endpoints()));
        assertTrue(e.getMessage().contains("rank 1 publishes 1 QPs per pair of ranks, rank 0 2")
                && e.getMessage().contains("GDA4J_IBGDA_QPS_PER_PEER"), e.getMessage());
        two.close();
        one.close();
        assertEquals(0, nic0.open());
        assertEquals(0, nic1.open());
    }

    @Test
    void aFailedCreationClosesTheQpsMadeBeforeIt() {
        RecordingNic nic = nicOf(0);
        nic.failCreation = 3;
        NicException e = assertThrows(NicException.class, () -> open(nic, 0, 5));
        assertTrue(e.getMessage().contains("rank 0 -> rank 3: out of QPs"), e.getMessage());
        assertEquals(2, nic.made.size());
        assertEquals(0, nic.open(), "the two QPs made before the failure are closed");
        assertTrue(nic.made.stream().allMatch(q -> q.closes == 1), "once each");
    }

    @Test
    void aFailedConnectClosesThatQpAndClosingTheExchangeClosesTheRest() {
        RecordingNic nic0 = nicOf(0);
        RecordingNic nic1 = nicOf(1);
        RecordingNic nic2 = nicOf(2);
        RcExchange x0 = open(nic0, 0, 4);
        RcEndpoints of1 = open(nic1, 1, 4).endpoints();
        RcEndpoints of2 = open(nic2, 2, 4).endpoints();
        NicQp to1 = x0.connect(1, "rank 1 (pid 11 on b)", of1);
        nic0.failConnect.add(x0.endpoints().forRank(2).orElseThrow().qpn());
        NicException e = assertThrows(NicException.class, () -> x0.connect(2, "rank 2 (pid 12 on c)", of2));
        assertTrue(e.getMessage().startsWith("rank 0 cannot connect its QP 0x000101 (rank 0 -> rank 2, on mlx5_0"),
                e.getMessage());
        assertTrue(e.getMessage().contains("to rank 2 (pid 12 on c)'s QP 0x000300 on mlx5_2 port 1 (Ethernet")
                && e.getMessage().contains("Invalid argument (injected)"), e.getMessage());
        RecordingQp failed = nic0.made.get(1);
        assertEquals(1, failed.closes, "the QP whose connect failed is closed at once");
        assertEquals(1, x0.waiting(), "rank 3's QP still waits for its link");
        // The world fails and frees: the link it made closes its QP, the exchange the QPs no link took.
        to1.close();
        x0.close();
        x0.close();
        assertEquals(0, nic0.open(), "nothing is left open");
        assertTrue(nic0.made.stream().allMatch(q -> q.closes == 1), "and nothing closed twice");
        assertThrows(IllegalStateException.class, () -> x0.connect(3, "rank 3", of1), "a closed exchange");
    }

    @Test
    void aPeerThatPublishedNothingForThisRankOrAPairTakenTwiceIsRefused() {
        RecordingNic nic0 = nicOf(0);
        RcExchange x0 = open(nic0, 0, 3);
        RcEndpoints of1 = open(nicOf(1), 1, 3).endpoints();
        RcEndpoints fromAnotherWorld = new RcEndpoints(Map.of(2, of1.forRank(0).orElseThrow()));
        NicException e = assertThrows(NicException.class, () -> x0.connect(1, "rank 1 (pid 11 on b)",
                fromAnotherWorld));
        assertTrue(e.getMessage().contains("rank 1 (pid 11 on b) published no RC endpoint for rank 0 (it has endpoints"
                + " for ranks [2])") && e.getMessage().contains("same gda4j version, world size"), e.getMessage());
        assertEquals(2, x0.waiting(), "a refused peer takes no QP");
        x0.connect(1, "rank 1", of1);
        IllegalStateException twice = assertThrows(IllegalStateException.class, () -> x0.connect(1, "rank 1", of1));
        assertTrue(twice.getMessage().contains("connected to it already"), twice.getMessage());
        assertThrows(IllegalStateException.class, () -> x0.connect(0, "rank 0", of1), "no QP to itself");
        assertThrows(IllegalArgumentException.class, () -> open(nic0, 3, 3));
        assertEquals(of1.forRank(0).orElseThrow(), nic0.made.get(0).connectedTo);
    }
}
