package io.gda4j.world;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.bootstrap.Bootstrap;
import io.gda4j.bootstrap.BootstrapConfig;
import io.gda4j.bootstrap.PeerFailureListener;
import io.gda4j.nic.QpAddress;
import io.gda4j.verbs.Gid;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The ibgda QP exchange between hosts, on a real bootstrap of ranks as threads; no NIC needed. */
@Timeout(60)
class QpExchangeTest {
    /** What rank {@code from} offers rank {@code to}: every field derived from the pair, so a mix-up shows. */
    static QpExchange.Offer offer(int from, int to) {
        byte[] gid = new byte[16];
        Arrays.fill(gid, (byte) (from * 16 + to));
        return new QpExchange.Offer(to, new QpAddress("mlx5_" + from, 0x100 * from + to, 0x10 + from, Gid.of(gid),
                0xabc00 + from * 16 + to), 0x5000 + from, 0x7f00_0000_0000L + ((long) from << 32), 1L << 28);
    }

    static List<QpExchange.Offer> offersOf(int rank, int size) {
        List<QpExchange.Offer> list = new ArrayList<>();
        for (int p = 0; p < size; p++) {
            if (p != rank) {
                list.add(offer(rank, p));
            }
        }
        return list;
    }

    @Test
    void fieldsSitAtTheirDescriptorOffsets() {
        byte[] bytes = QpExchange.encode(2, List.of(offer(2, 1)));
        ByteBuffer b = ByteBuffer.wrap(bytes);
        assertEquals(QpOfferDescriptor.MAGIC, b.getInt(0));
        assertEquals(1, b.getShort(6));
        assertEquals(2, b.getInt(8));
        int o = QpOfferDescriptor.HEADER_BYTES;
        assertEquals(1, b.getInt(o + QpOfferDescriptor.PEER_OFFSET));
        assertEquals(0x201, b.getInt(o + QpOfferDescriptor.QPN_OFFSET));
        assertEquals(0xabc00 + 33, b.getInt(o + QpOfferDescriptor.PSN_OFFSET));
        assertEquals(0x12, b.getShort(o + QpOfferDescriptor.LID_OFFSET));
        assertEquals(33, b.get(o + QpOfferDescriptor.GID_OFFSET));
        assertEquals(0x5002, b.getInt(o + QpOfferDescriptor.RKEY_OFFSET));
        assertEquals(0x7f00_0000_0000L + (2L << 32), b.getLong(o + QpOfferDescriptor.HEAP_BASE_OFFSET));
        assertEquals(1L << 28, b.getLong(o + QpOfferDescriptor.HEAP_BYTES_OFFSET));
        assertEquals(6, b.getShort(o + QpOfferDescriptor.NAME_LENGTH_OFFSET));
        assertEquals(QpOfferDescriptor.HEADER_BYTES + QpOfferDescriptor.OFFER_BYTES + 6, bytes.length);
    }

    @Test
    void fourRanksEachReceiveExactlyTheOffersMadeToThem() throws Exception {
        int size = 4;
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        ExecutorService pool = Executors.newCachedThreadPool();
        try {
            List<Future<QpExchange.Offer[]>> results = new ArrayList<>();
            for (int r = 0; r < size; r++) {
                int rank = r;
                results.add(pool.submit(() -> {
                    BootstrapConfig c = BootstrapConfig.of(rank, size, new InetSocketAddress("127.0.0.1", port), "qp")
                            .withTimeouts(20_000, 20_000);
                    try (Bootstrap b = Bootstrap.join(c, PeerFailureListener.NONE)) {
                        return QpExchange.exchange(b, offersOf(rank, size));
                    }
                }));
            }
            for (int me = 0; me < size; me++) {
                QpExchange.Offer[] got = results.get(me).get(30, TimeUnit.SECONDS);
                for (int from = 0; from < size; from++) {
                    if (from == me) {
                        assertNull(got[from]);
                    } else {
                        QpExchange.Offer want = offer(from, me);
                        assertEquals(want.qp(), got[from].qp(), "rank " + me + " from " + from);
                        assertArrayEquals(want.qp().gid().raw(), got[from].qp().gid().raw());
                        assertEquals(want, got[from]);
                    }
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aMissingOrMalformedOfferIsRefusedNamingTheRank() {
        byte[][] published = new byte[3][];
        for (int r = 0; r < 3; r++) {
            published[r] = QpExchange.encode(r, offersOf(r, 3));
        }
        published[2] = QpExchange.encode(2, List.of(offer(2, 1)));
        WorldSetupException missing = assertThrows(WorldSetupException.class, () -> QpExchange.offersTo(0, published));
        assertTrue(missing.getMessage().contains("rank 2 offered no QP to rank 0 (it offered to ranks [1])"),
                missing.getMessage());
        assertEquals(0x201, QpExchange.offersTo(1, published)[2].qp().qpn(), "rank 1 still gets its offer");
        published[2] = Arrays.copyOf(QpExchange.encode(2, offersOf(2, 3)), 20);
        WorldSetupException cut = assertThrows(WorldSetupException.class, () -> QpExchange.offersTo(0, published));
        assertTrue(cut.getMessage().contains("rank 2's QP offers of 20 bytes are malformed"), cut.getMessage());
        published[2] = QpExchange.encode(1, offersOf(1, 3));
        WorldSetupException liar = assertThrows(WorldSetupException.class, () -> QpExchange.offersTo(0, published));
        assertTrue(liar.getMessage().contains("they say they are rank 1"), liar.getMessage());
        published[2] = QpExchange.encode(2, List.of(offer(2, 0), offer(2, 1), new QpExchange.Offer(7,
                offer(2, 1).qp(), 1, 2, 3)));
        assertThrows(WorldSetupException.class, () -> QpExchange.offersTo(0, published), "a peer outside the world");
    }

    @Test
    void anOfferToItselfOrTwoToOnePeerAreRefusedWhenPublishing() {
        assertThrows(IllegalArgumentException.class, () -> QpExchange.encode(1, List.of(offer(1, 1))));
        IllegalArgumentException twice = assertThrows(IllegalArgumentException.class,
                () -> QpExchange.encode(1, List.of(offer(1, 0), offer(1, 0))));
        assertTrue(twice.getMessage().contains("two QPs to rank 0"), twice.getMessage());
    }
}
