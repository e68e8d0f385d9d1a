package io.gda4j.world;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.gda4j.p2p.P2pTransport;
import io.gda4j.transport.PeerLink;
import io.gda4j.transport.Transport;

import org.junit.jupiter.api.Test;

/**
 * The rule "atomics on one word go through one path" as peer entry handles: a rank with a loopback QP (IBGDA links)
 * gets it in its SELF entry with {@link AtomicRouting#PEER_NIC_ATOMICS}; p2p and proxy entries pointing at it are
 * marked so the device refuses their GPU ADDs; IBGDA entries and ranks without IBGDA links are unchanged.
 */
class AtomicRoutingTest {
    static final long QP = 0x7f00_0000_1000L;
    static final long CHANNEL = 0x7f00_0000_2000L;

    @Test
    void aRankWithoutIbgdaLinksKeepsItsEntries() {
        assertEquals(0, AtomicRouting.routedHandle(Transport.SELF, 0, 0));
        assertEquals(P2pTransport.NO_NATIVE_ATOMICS,
                AtomicRouting.routedHandle(Transport.P2P, P2pTransport.NO_NATIVE_ATOMICS, 0));
        assertEquals(CHANNEL, AtomicRouting.routedHandle(Transport.PROXY, CHANNEL, 0));
    }

    @Test
    void itsOwnAddsGoThroughItsLoopbackQp() {
        long h = AtomicRouting.routedHandle(Transport.SELF, 0, QP);
        assertEquals(QP, h & ~AtomicRouting.PEER_HANDLE_FLAGS, "the SELF entry names the loopback DeviceQp");
        assertEquals(AtomicRouting.PEER_NIC_ATOMICS, h & AtomicRouting.PEER_HANDLE_FLAGS);
    }

    @Test
    void gpuAddsFromP2pAndProxyPeersAreMarkedForRefusal() {
        assertEquals(AtomicRouting.PEER_NIC_ATOMICS, AtomicRouting.routedHandle(Transport.P2P, 0, QP));
        assertEquals(P2pTransport.NO_NATIVE_ATOMICS | AtomicRouting.PEER_NIC_ATOMICS,
                AtomicRouting.routedHandle(Transport.P2P, P2pTransport.NO_NATIVE_ATOMICS, QP));
        long proxy = AtomicRouting.routedHandle(Transport.PROXY, CHANNEL, QP);
        assertEquals(CHANNEL, proxy & ~AtomicRouting.PEER_HANDLE_FLAGS, "the channel address survives the flag");
        assertEquals(AtomicRouting.PEER_NIC_ATOMICS, proxy & AtomicRouting.PEER_HANDLE_FLAGS);
    }

    @Test
    void ibgdaEntriesAreNicAtomicsAlready() {
        assertEquals(QP + 0x100, AtomicRouting.routedHandle(Transport.IBGDA, QP + 0x100, QP));
        assertEquals(0, AtomicRouting.routedHandle(Transport.NONE, 0, QP));
    }

    @Test
    void aLoopbackQpWhoseLowBitsAreTakenIsRefused() {
        assertThrows(IllegalStateException.class, () -> AtomicRouting.routedHandle(Transport.SELF, 0, QP | 2));
    }

    @Test
    void theP2pFlagBitIsOneOfTheHandleFlags() {
        assertEquals(P2pTransport.NO_NATIVE_ATOMICS, P2pTransport.NO_NATIVE_ATOMICS & AtomicRouting.PEER_HANDLE_FLAGS);
        assertEquals(0, P2pTransport.NO_NATIVE_ATOMICS & AtomicRouting.PEER_NIC_ATOMICS);
    }

    @Test
    void peersOfProcessesWhoseRanksTakeNicAtomicsAreRefusedGpuAtomicAdds() {
        PeerLink p2p = new PeerLink(Transport.P2P, 1L << 40, 1, 0, 0, 0, null);
        assertEquals(1 | AtomicRouting.PEER_NIC_ATOMICS,
                AtomicRouting.routedToNicAtomics(p2p.transport(), p2p.handle()), "the no-native-atomics bit stays");
        assertEquals(0x1000 | AtomicRouting.PEER_NIC_ATOMICS, AtomicRouting.routedToNicAtomics(Transport.PROXY,
                0x1000));
        assertEquals(0x2000, AtomicRouting.routedToNicAtomics(Transport.IBGDA, 0x2000), "NIC atomics already");
    }
}
