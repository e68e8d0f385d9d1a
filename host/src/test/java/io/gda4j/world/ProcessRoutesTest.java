package io.gda4j.world;

import io.gda4j.transport.Transport;
import static io.gda4j.world.PeerCardTest.card;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.config.Settings;
import io.gda4j.p2p.P2pTransport;
import io.gda4j.transport.PeerLink;
import io.gda4j.transport.RemotePeer;
import io.gda4j.transport.TransportChoice;
import io.gda4j.transport.TransportProvider;
import io.gda4j.transport.TransportSetupException;
import io.gda4j.transport.Transports;
import io.gda4j.world.ProcessRoutes.Route;

import java.util.List;

import org.junit.jupiter.api.Test;

/** Which pairs a multi-process world connects, and every refusal, decided from the cards alone. */
class ProcessRoutesTest {
    static final String NO_NIC = "no RDMA device (ibv_get_device_list returned none)";

    @Test
    void processesOfOneHostMapEachOthersHeapsOnOneGpuOrSeveral() {
        List<PeerCard> cards = List.of(card(0, 3, "h", "GPU-a"), card(1, 3, "h", "GPU-a"), card(2, 3, "h", "GPU-b"));
        assertArrayEquals(new Route[] {Route.SELF, Route.IPC_SAME_GPU, Route.IPC_PEER_GPU},
                ProcessRoutes.plan(cards, 0));
        assertArrayEquals(new Route[] {Route.IPC_PEER_GPU, Route.IPC_PEER_GPU, Route.SELF},
                ProcessRoutes.plan(cards, 2));
    }

    @Test
    void aPeerOnAnotherHostIsLeftUnmappedForATransportThatReachesItThroughANic() {
        List<PeerCard> cards = List.of(card(0, 3, "node1", "GPU-a"), card(1, 3, "node1", "GPU-b"),
                card(2, 3, "node2", "GPU-a"));
        assertArrayEquals(new Route[] {Route.SELF, Route.IPC_PEER_GPU, Route.OTHER_HOST}, ProcessRoutes.plan(cards, 0));
        assertArrayEquals(new Route[] {Route.OTHER_HOST, Route.OTHER_HOST, Route.SELF}, ProcessRoutes.plan(cards, 2));
        // The host decides first: a card of another host is OTHER_HOST whatever GPU it names.
        PeerCard sameUuidElsewhere = card(1, 2, "node2", "GPU-a");
        assertArrayEquals(new Route[] {Route.SELF, Route.OTHER_HOST},
                ProcessRoutes.plan(List.of(card(0, 2, "node1", "GPU-a"), sameUuidElsewhere), 0));
    }

    @Test
    void p2pRefusesAPeerOnAnotherHostAndTheChoiceSaysWhatReachesOtherHosts() {
        RemotePeer far = RemotePeer.onAnotherHost(2, 1 << 20, false, null, "rank 2 (pid 4002 on node2)");
        TransportProvider p2p = Transports.providers(Settings.ofProcess()).stream()
                .filter(p -> p.name().equals("p2p")).findFirst().orElseThrow();
        String why = p2p.unavailableAcrossProcesses(null, far).orElseThrow();
        assertTrue(why.contains("rank 2 (pid 4002 on node2)") && why.contains("another host"), why);
        TransportSetupException e = assertThrows(TransportSetupException.class, () -> TransportChoice.choose("auto",
                List.of(p2p), "rank 0 to rank 2", p -> p.unavailableAcrossProcesses(null, far),
                "between these processes", ". Ranks of other hosts are reached through a NIC only; this host: "
                        + NO_NIC));
        assertTrue(e.getMessage().contains("p2p: " + why) && e.getMessage().contains(NO_NIC), e.getMessage());
    }

    /** A pair of two other ranks is answered by a peer in the same relation: of one host, or of two. */
    @Test
    void aPairOfOtherRanksTakesTheTransportOfAPeerInTheSameRelation() {
        List<PeerCard> cards = List.of(card(0, 4, "node1", "GPU-a"), card(1, 4, "node1", "GPU-b"),
                card(2, 4, "node2", "GPU-a"), card(3, 4, "node2", "GPU-b"));
        assertEquals(1, ProcessRoutes.standIn(cards, 0, 2, 3), "2 and 3 share node2: as 0 reaches 1 on node1");
        assertEquals(2, ProcessRoutes.standIn(cards, 0, 1, 3), "1 and 3 are on two hosts: as 0 reaches node2");
        assertEquals(0, ProcessRoutes.standIn(cards, 1, 3, 2), "0 is 1's peer of its own host");
        List<PeerCard> alone = List.of(card(0, 3, "node1", "GPU-a"), card(1, 3, "node2", "GPU-a"),
                card(2, 3, "node2", "GPU-b"));
        assertEquals(1, ProcessRoutes.standIn(alone, 0, 1, 2), "no peer on node1: the pair's own 'from' answers");
    }

    @Test
    void aRemotePeerIsEitherMappedOnThisHostOrUnmappedOnAnother() {
        RemotePeer far = RemotePeer.onAnotherHost(1, 1 << 20, true, PeerCardTest.handle(1), "rank 1");
        assertEquals(0, far.heapAddress());
        assertTrue(!far.sameHost() && !far.sameGpu() && far.nativeAtomics());
        assertArrayEquals(PeerCardTest.handle(1), far.withOffer(new byte[] {7}).heapHandle());
        assertTrue(far.toString().contains("on another host"), far.toString());
        assertTrue(new RemotePeer(1, 1L << 40, 1 << 20, true, true, "rank 1").sameHost());
        assertThrows(IllegalArgumentException.class,
                () -> new RemotePeer(1, 1L << 40, 1 << 20, false, false, "rank 1", null, false, null));
        assertThrows(IllegalArgumentException.class,
                () -> new RemotePeer(1, 0, 1 << 20, true, true, "rank 1", null, false, null));
    }

    @Test
    void theRealTransportsSayWhetherTheyConnectProcesses() {
        List<String> names = new java.util.ArrayList<>();
        for (TransportProvider p : Transports.providers(Settings.ofProcess())) {
            names.add(p.name());
        }
        assertTrue(names.contains("p2p"), names.toString());
        RemotePeer peer = new RemotePeer(1, 1L << 40, 1 << 20, true, true, "rank 1");
        TransportProvider p2p = Transports.providers(Settings.ofProcess()).stream()
                .filter(p -> p.name().equals("p2p")).findFirst().orElseThrow();
        assertTrue(p2p.unavailableAcrossProcesses(null, peer).isEmpty(), "p2p stores into the mapped heap");
        PeerLink link = p2p.connectAcrossProcesses(null, peer);
        assertEquals(Transport.P2P, link.transport());
        assertEquals(1L << 40, link.peerHeap());
        assertEquals(0, link.peerAbortFlag(), "the peer's abort word is not mapped across processes");
        assertEquals(P2pTransport.NO_NATIVE_ATOMICS, p2p.connectAcrossProcesses(null,
                new RemotePeer(1, 1L << 40, 1 << 20, false, false, "rank 1")).handle());
    }

    @Test
    void cardsThatDoNotDescribeOneWorldAreRefused() {
        PeerCard big = new PeerCard(1, 2, 7, 2 << 20, PeerCard.hostId("h", "boot-1"), PeerCardTest.handle(1), "GPU-b",
                "bus", "h");
        WorldSetupException heap = assertThrows(WorldSetupException.class,
                () -> ProcessRoutes.plan(List.of(card(0, 2, "h", "GPU-a"), big), 0));
        assertTrue(heap.getMessage().contains("symmetric") && heap.getMessage().contains(WorldConfig.HEAP_SIZE_ENV),
                heap.getMessage());
        WorldSetupException size = assertThrows(WorldSetupException.class, () -> ProcessRoutes.plan(
                List.of(card(0, 2, "h", "GPU-a"), card(1, 3, "h", "GPU-b")), 0));
        assertTrue(size.getMessage().contains("says rank 1 of 3, in a world of 2"), size.getMessage());
        PeerCard unexported = new PeerCard(1, 2, 7, 1 << 20, PeerCard.hostId("h", "boot-1"), null, "GPU-b", "bus", "h");
        WorldSetupException handle = assertThrows(WorldSetupException.class,
                () -> ProcessRoutes.plan(List.of(card(0, 2, "h", "GPU-a"), unexported), 0));
        assertTrue(handle.getMessage().contains("exported no heap handle"), handle.getMessage());
    }
}
