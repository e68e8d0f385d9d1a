package io.gda4j.proxy;

import static io.gda4j.proxy.VerbsTestChannel.SECOND;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Pointer;

import io.gda4j.nic.MemoryKind;
import io.gda4j.nic.MemoryRegistration;
import io.gda4j.nic.Nic;
import io.gda4j.nic.NicAccess;
import io.gda4j.nic.NicCapabilities;
import io.gda4j.nic.NicException;
import io.gda4j.nic.NicMemory;
import io.gda4j.nic.NicQp;
import io.gda4j.nic.QpAddress;
import io.gda4j.nic.QpRings;
import io.gda4j.nic.QpSpec;
import io.gda4j.nic.QpState;
import io.gda4j.nic.RcEndpoints;
import io.gda4j.nic.emulated.EmulatedNic;
import io.gda4j.nic.emulated.EmulatedNicConfig;
import io.gda4j.nic.emulated.HostMemoryPlatform;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The verbs handler across processes over a NIC that connects by QP number (the mlx5 path: {@code RcExchange}),
 * run on the CPU. No RDMA NIC exists here, so each "process" gets an emulated NIC over host memory that reports no
 * process links: the session then takes the path it takes on mlx5, and the emulated NICs, which connect QPs of one
 * JVM by device name and QP number, stand in for the fabric. Each side publishes only bytes (its offer with one
 * endpoint per pair), connects its own QP of each pair to the endpoint the peer published for its rank, and the one
 * RC connection carries both directions: puts, signals, atomics and credit reports land byte-exact in the peer's heap
 * and credit block, reached by rkey with nothing mapped across. A failure leaves no QP open.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class VerbsRcExchangeTest {
    static final int HEAP = 1 << 16;
    static final long LONG_CREDIT_TIMEOUT = 20 * SECOND;

    HostMemoryPlatform platform;
    final List<Process> processes = new ArrayList<>();

    /** An emulated NIC that, like mlx5, connects processes by RC endpoint only; its QPs record what they did. */
    static final class ByQpNumber implements Nic {
        final EmulatedNic nic;
        final List<RecordedQp> made = new ArrayList<>();
        /** Creations left before one fails (-1: none fails). */
        int failAfter = -1;

        ByQpNumber(EmulatedNic nic) {
            this.nic = nic;
        }

        @Override
        public String name() {
            return nic.name();
        }

        @Override
        public String description() {
            return nic.description() + ", connecting by QP number";
        }

        @Override
        public NicCapabilities capabilities() {
            NicCapabilities c = nic.capabilities();
            return new NicCapabilities(c.maxSqWqebbs(), c.maxCqEntries(), c.maxInlineBytes(), c.atomics(),
                    c.nullMemory(), c.writesMayPassCqe(), c.relaxedOrdering(), c.gpuDirectWrites(), false);
        }

        @Override
        public NicMemory registerMemory(MemoryRegistration request) {
            return nic.registerMemory(request);
        }

        @Override
        public NicMemory nullMemory() {
            return nic.nullMemory();
        }

        @Override
        public NicQp createQp(QpSpec spec) {
            if (failAfter == 0) {
                throw new NicException(spec.label() + ": out of QPs (injected)");
            }
            failAfter--;
            RecordedQp qp = new RecordedQp(nic.createQp(spec));
            made.add(qp);
            return qp;
        }

        long open() {
            return made.stream().filter(q -> q.closes == 0).count();
        }

        @Override
        public void close() {
            nic.close();
        }
    }

    /** A QP of {@link ByQpNumber}: remembers the endpoint it was connected to and how often it was closed. */
    static final class RecordedQp implements NicQp {
        final NicQp qp;
        QpAddress connectedTo;
        int closes;

        RecordedQp(NicQp qp) {
            this.qp = qp;
        }

        @Override
        public int qpn() {
            return qp.qpn();
        }

        @Override
        public String label() {
            return qp.label();
        }

        @Override
        public Nic nic() {
            return qp.nic();
        }

        @Override
        public QpAddress address() {
            return qp.address();
        }

        @Override
        public void connect(QpAddress peer) {
            qp.connect(peer);
            connectedTo = peer;
        }

        @Override
        public QpState state() {
            return qp.state();
        }

        @Override
        public QpRings deviceRings() {
            return qp.deviceRings();
        }

        @Override
        public QpRings hostRings() {
            return qp.hostRings();
        }

        @Override
        public void close() {
            closes++;
            qp.close();
        }
    }

    /** One process of the job: rank {@code rank}, its own NIC, session, proxy service and heap; no memory lent. */
    final class Process implements AutoCloseable {
        final int rank;
        final String description;
        final ByQpNumber nic;
        final VerbsSession session;
        final long heap;
        final ProxyService service;
        final byte[] published;

        Process(int rank, int worldSize, int failAfter) {
            this.rank = rank;
            this.description = "rank " + rank + " (pid " + (4000 + rank) + " on host" + rank + ")";
            nic = new ByQpNumber(new EmulatedNic(platform, new EmulatedNicConfig(EmulatedNicConfig.IDLE_BACKOFF,
                    true)));
            nic.failAfter = failAfter;
            // No cross-process memory: over a NIC that connects by QP number nothing is mapped across.
            session = new VerbsSession(nic, this::words, 256, null, null);
            heap = platform.allocate(HEAP);
            platform.allowWrites(heap, HEAP);
            session.registerHeap(rank, null, heap, HEAP, MemoryKind.DEVICE);
            service = new ProxyService(new ProxyConfig(1, VerbsTestChannel.DEPTH, ProxyConfig.IDLE_BACKOFF,
                    ProxyConfig.SignalPath.AUTO, Duration.ofSeconds(5)));
            processes.add(this);
            published = session.offerAcrossProcesses(rank, worldSize).encode();
        }

        Process(int rank) {
            this(rank, 2, -1);
        }

        /** Credit blocks in this process's host memory, which the peer's NIC writes by rkey. */
        VerbsSession.WordMemory words(int bytes) {
            return PlatformMemory.words(platform, bytes);
        }

        /** Connects with what the peer published, as the world does after its all-gather. */
        VerbsLink connect(Process peer) {
            return session.connectAcrossProcesses(rank, null, peer.rank, peer.description, 0, HEAP,
                    VerbsOffer.decode(peer.description, peer.published));
        }

        RecordedQp qpFor(int peer) {
            return nic.made.stream().filter(q -> q.label().equals("proxy rank " + rank + " -> rank " + peer))
                    .findFirst().orElseThrow();
        }

        @Override
        public void close() {
            try {
                service.close();
            } catch (ProxyException expectedAfterAFailure) {
                // a test that failed a channel on purpose leaves it reporting that failure
            }
            session.close();
            nic.close();
        }
    }

    @BeforeEach
    void open() {
        platform = new HostMemoryPlatform();
    }

    @AfterEach
    void close() {
        for (int i = processes.size() - 1; i >= 0; i--) {
            processes.get(i).close();
        }
    }

    @Test
    void theOfferCarriesOneEndpointPerPairAndEachSideConnectsToExactlyThePeersEndpointForIt() {
        Process a = new Process(0);
        Process b = new Process(1);
        VerbsOffer offerOfA = VerbsOffer.decode(a.description, a.published);
        VerbsOffer offerOfB = VerbsOffer.decode(b.description, b.published);
        assertEquals(0, offerOfA.creditsHandle().length, "nothing lent as mapped memory");
        assertEquals(0, offerOfA.lockHandle().length);
        assertEquals(List.of(1), List.copyOf(offerOfA.endpoints().byRank().keySet()), "one QP, for the pair (0, 1)");
        assertEquals(a.qpFor(1).address(), offerOfA.endpoints().forRank(1).orElseThrow());
        assertEquals(QpState.RESET, a.qpFor(1).state(), "made in the offer phase, connected after the gather");

        VerbsLink ab = a.connect(b);
        VerbsLink ba = b.connect(a);
        assertEquals(offerOfB.endpoints().forRank(0).orElseThrow(), a.qpFor(1).connectedTo,
                "A's QP of the pair goes to RTR towards the endpoint B published for rank 0, exactly");
        assertEquals(offerOfA.endpoints().forRank(1).orElseThrow(), b.qpFor(0).connectedTo);
        assertEquals(b.qpFor(0).qpn(), a.qpFor(1).connectedTo.qpn(), "the pair's two QPs point at each other");
        assertEquals(a.qpFor(1).qpn(), b.qpFor(0).connectedTo.qpn());
        assertEquals(QpState.RTS, a.qpFor(1).state());
        assertEquals(b.heap, ab.peerHeap(), "WQEs name B's own addresses, as on the wire");
        assertEquals(offerOfB.heapRkey(), ab.peerRkey());
        assertEquals(offerOfB.creditBlockFor(0), ab.peerCredits(), "B's block for rank 0, reached by rkey");
        assertEquals(offerOfB.creditsRkey(), ab.peerCreditsRkey());
        assertEquals(offerOfA.creditBlockFor(1), ba.peerCredits());
        assertThrows(IllegalStateException.class, () -> a.connect(b), "a pair is connected once");
    }

    @Test
    void theOneRcConnectionOfAPairCarriesBothDirectionsByteExact() {
        Process a = new Process(0);
        Process b = new Process(1);
        VerbsTestChannel ab = new VerbsTestChannel(a.connect(b), 4, LONG_CREDIT_TIMEOUT); // a small window
        VerbsTestChannel ba = new VerbsTestChannel(b.connect(a), 4, LONG_CREDIT_TIMEOUT);
        a.service.add(ab.channel, 0);
        b.service.add(ba.channel, 0);
        byte[] fromA = new byte[HEAP / 2];
        byte[] fromB = new byte[HEAP / 2];
        new Random(1).nextBytes(fromA);
        new Random(2).nextBytes(fromB);
        new Pointer(a.heap).write(0, fromA, 0, fromA.length);
        new Pointer(b.heap).write(0, fromB, 0, fromB.length);
        TwoWayTraffic.runAndCheck(ab, ba, o -> a.heap + o, o -> b.heap + o, HEAP, fromA, fromB,
                new int[] {1, 8, 63, 4096, 8191}, 20);
    }

    @Test
    void aWorldThatFailsHalfwayLeavesNoQpOpen() {
        // Rank 0 of three: its pair with rank 1 connects, rank 2 publishes nothing for it (another world), and the
        // world gives up; closing the session frees the link's QP and the QP no link took.
        Process a = new Process(0, 3, -1);
        Process b = new Process(1, 3, -1);
        a.connect(b);
        VerbsOffer strange = VerbsOffer.decode("rank 2", b.published);
        VerbsOffer noEndpointForRank0 = new VerbsOffer(strange.heapRkey(), strange.heapAddress(), HEAP,
                NicAccess.HEAP, strange.creditsRkey(), strange.creditsAddress(), 3, new byte[0], new byte[0],
                new RcEndpoints(java.util.Map.of(1, strange.endpoints().forRank(2).orElseThrow())));
        NicException e = assertThrows(NicException.class, () -> a.session.connectAcrossProcesses(0, null, 2,
                "rank 2 (pid 4002 on host2)", 0, HEAP, noEndpointForRank0));
        assertTrue(e.getMessage().contains("rank 2 (pid 4002 on host2) published no RC endpoint for rank 0"),
                e.getMessage());
        assertEquals(2, a.nic.open(), "the link's QP and the QP for rank 2, until the session closes");
        a.session.close();
        assertEquals(0, a.nic.open(), "nothing left open");
        assertTrue(a.nic.made.stream().allMatch(q -> q.closes == 1), "and nothing closed twice");
    }

    @Test
    void anOfferThatCannotMakeEveryQpMakesNothing() {
        NicException none = assertThrows(NicException.class, () -> new Process(0, 4, 2),
                "the third QP cannot be made");
        assertTrue(none.getMessage().contains("out of QPs"), none.getMessage());
        Process failed = processes.get(processes.size() - 1);
        assertEquals(2, failed.nic.made.size());
        assertEquals(0, failed.nic.open(), "the two QPs made before the failure are closed");
    }

    @Test
    void aPeerOnTheEmulatedNicIsRefusedWithWhatToDo() {
        Process a = new Process(0);
        Process b = new Process(1);
        VerbsOffer ofB = VerbsOffer.decode(b.description, b.published);
        VerbsOffer emulatedPeer = new VerbsOffer(ofB.heapRkey(), ofB.heapAddress(), HEAP, NicAccess.HEAP,
                ofB.creditsRkey(), ofB.creditsAddress(), 2, new byte[8], new byte[8]);
        ProxyException e = assertThrows(ProxyException.class, () -> a.session.connectAcrossProcesses(0, null, 1,
                b.description, 0, HEAP, emulatedPeer));
        assertTrue(e.getMessage().contains("offers no RC endpoints (its process uses the emulated NIC)")
                && e.getMessage().contains("set the same GDA4J_NIC in every process"), e.getMessage());
        assertEquals(QpState.RESET, a.qpFor(1).state(), "a refused peer takes no QP");
    }
}
