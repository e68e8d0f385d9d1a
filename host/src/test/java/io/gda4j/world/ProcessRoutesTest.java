package io.gda4j.world;

import static io.gda4j.world.PeerCardTest.card;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.verbs.Verbs;
import io.gda4j.world.ProcessRoutes.Route;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

/** Which pairs a multi-process world connects, and every refusal, decided from the cards alone. */
class ProcessRoutesTest {
    static final String NO_NIC = "no RDMA device (ibv_get_device_list returned none)";

    @Test
    void processesOfOneHostMapEachOthersHeapsOnOneGpuOrSeveral() {
        List<PeerCard> cards = List.of(card(0, 3, "h", "GPU-a"), card(1, 3, "h", "GPU-a"), card(2, 3, "h", "GPU-b"));
        assertArrayEquals(new Route[] {Route.SELF, Route.IPC_SAME_GPU, Route.IPC_PEER_GPU},
                ProcessRoutes.plan(cards, 0, "auto", () -> NO_NIC));
        assertArrayEquals(new Route[] {Route.IPC_PEER_GPU, Route.IPC_PEER_GPU, Route.SELF},
                ProcessRoutes.plan(cards, 2, "p2p", () -> NO_NIC));
    }

    @Test
    void aPeerOnAnotherHostIsRefusedSayingWhatIsMissing() {
        AtomicInteger asked = new AtomicInteger();
        List<PeerCard> cards = List.of(card(0, 3, "node1", "GPU-a"), card(1, 3, "node1", "GPU-b"),
                card(2, 3, "node2", "GPU-a"));
        WorldSetupException e = assertThrows(WorldSetupException.class, () -> ProcessRoutes.plan(cards, 0, "auto",
                () -> {
                    asked.incrementAndGet();
                    return NO_NIC;
                }));
        String m = e.getMessage();
        assertTrue(m.contains("rank 2 (pid 4002 on node2") && m.contains("rank 0 (pid 4000 on node1"), m);
        assertTrue(m.contains("RDMA NIC") && m.contains(NO_NIC), m);
        assertTrue(m.contains("run the job's processes on one host"), m);
        assertTrue(asked.get() == 1, "the RDMA status is asked once");
        ProcessRoutes.plan(cards.subList(0, 2).stream().map(c -> card(c.rank(), 2, "node1", c.gpuUuid())).toList(), 0,
                "auto", () -> {
                    throw new AssertionError("RDMA is not asked about when every peer is on this host");
                });
    }

    @Test
    void theRefusalOnThisMachineQuotesItsOwnRdmaStatus() {
        List<PeerCard> cards = List.of(card(0, 2, "node1", "GPU-a"), card(1, 2, "node2", "GPU-a"));
        String status = Verbs.status().sentence();
        WorldSetupException e = assertThrows(WorldSetupException.class,
                () -> ProcessRoutes.plan(cards, 1, "auto", () -> Verbs.status().sentence()));
        assertTrue(e.getMessage().contains(status), e.getMessage());
    }

    @Test
    void proxyAndIbgdaBetweenProcessesAreRefusedWithWhatToUseInstead() {
        List<PeerCard> cards = List.of(card(0, 2, "h", "GPU-a"), card(1, 2, "h", "GPU-b"));
        for (String t : new String[] {"proxy", "ibgda"}) {
            WorldSetupException e = assertThrows(WorldSetupException.class,
                    () -> ProcessRoutes.plan(cards, 0, t, () -> NO_NIC));
            assertTrue(e.getMessage().contains("transport " + t + " does not connect processes yet"), e.getMessage());
            assertTrue(e.getMessage().contains(WorldConfig.TRANSPORT_ENV + "=auto or p2p"), e.getMessage());
        }
    }

    @Test
    void cardsThatDoNotDescribeOneWorldAreRefused() {
        PeerCard big = new PeerCard(1, 2, 7, 2 << 20, PeerCard.hostId("h", "boot-1"), PeerCardTest.handle(1), "GPU-b",
                "bus", "h");
        WorldSetupException heap = assertThrows(WorldSetupException.class,
                () -> ProcessRoutes.plan(List.of(card(0, 2, "h", "GPU-a"), big), 0, "auto", () -> NO_NIC));
        assertTrue(heap.getMessage().contains("symmetric") && heap.getMessage().contains(WorldConfig.HEAP_SIZE_ENV),
                heap.getMessage());
        WorldSetupException size = assertThrows(WorldSetupException.class, () -> ProcessRoutes.plan(
                List.of(card(0, 2, "h", "GPU-a"), card(1, 3, "h", "GPU-b")), 0, "auto", () -> NO_NIC));
        assertTrue(size.getMessage().contains("says rank 1 of 3, in a world of 2"), size.getMessage());
        PeerCard unexported = new PeerCard(1, 2, 7, 1 << 20, PeerCard.hostId("h", "boot-1"), null, "GPU-b", "bus", "h");
        WorldSetupException handle = assertThrows(WorldSetupException.class,
                () -> ProcessRoutes.plan(List.of(card(0, 2, "h", "GPU-a"), unexported), 0, "auto", () -> NO_NIC));
        assertTrue(handle.getMessage().contains("exported no heap handle"), handle.getMessage());
    }
}
