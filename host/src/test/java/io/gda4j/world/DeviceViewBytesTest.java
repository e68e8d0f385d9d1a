package io.gda4j.world;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gda4j.p2p.P2pTransport;
import io.gda4j.transport.PeerLink;
import io.gda4j.transport.Transport;

import java.nio.ByteBuffer;

import org.junit.jupiter.api.Test;

/**
 * The device view a rank copies to its GPU ({@link Rank#deviceView}), built without a GPU: the header's flags come
 * from the links' transports ({@link Transport#viewFlag()}), not from the world knowing which transport sets which,
 * and each entry carries its transport's code and capabilities from the table.
 */
class DeviceViewBytesTest {
    static final long HEAP = 0x7f00_0000_0000L;

    static PeerLink link(Transport transport, long peerHeap, long handle) {
        return new PeerLink(transport, peerHeap, handle, 0x11, 0x22, 0xabc0, null);
    }

    static int flags(PeerLink... links) {
        return Rank.deviceView(0, links, HEAP, 1 << 20, 0x1000, 0x2000, 5).getInt(DeviceViewDescriptor.FLAGS_OFFSET);
    }

    @Test
    void headerFlagsAreTheUnionOfThePeersTags() {
        PeerLink self = link(Transport.SELF, HEAP, 0);
        PeerLink p2p = link(Transport.P2P, 0x7e00_0000_0000L, P2pTransport.NO_NATIVE_ATOMICS);
        PeerLink ibgda = link(Transport.IBGDA, 0, 0x5000);
        PeerLink proxy = link(Transport.PROXY, 0, 0x6000);
        assertEquals(0, flags(self, p2p, null), "self, p2p and no link set no flag");
        assertEquals(Transport.IBGDA.viewFlag(), flags(self, ibgda, p2p));
        assertEquals(Transport.PROXY.viewFlag(), flags(self, proxy, proxy));
        assertEquals(Transport.PROXY.viewFlag() | Transport.IBGDA.viewFlag(), flags(self, p2p, null, ibgda, proxy));
        assertEquals(3, Transport.PROXY.viewFlag() | Transport.IBGDA.viewFlag(), "two bits, one each");
        assertEquals(0, flags(new PeerLink[] {null, null}), "a rank without links");
    }

    @Test
    void headerAndEntriesCarryTheRankAndEachLink() {
        PeerLink[] links = {link(Transport.P2P, 0x7e00_0000_0000L, 1), link(Transport.SELF, HEAP, 0), null,
            link(Transport.IBGDA, 0, 0x5000), link(Transport.PROXY, 0, 0x6000)};
        ByteBuffer b = Rank.deviceView(1, links, HEAP, 1 << 20, 0x1000, 0x2000, 5_000_000_000L);
        assertEquals(0, b.position());
        assertEquals(DeviceViewDescriptor.viewLength(5), b.remaining());
        assertEquals(DeviceViewDescriptor.VIEW_MAGIC, b.getInt(DeviceViewDescriptor.MAGIC_OFFSET));
        assertEquals(DeviceViewDescriptor.VIEW_VERSION, b.getInt(DeviceViewDescriptor.VERSION_OFFSET));
        assertEquals(1, b.getInt(DeviceViewDescriptor.RANK_OFFSET));
        assertEquals(5, b.getInt(DeviceViewDescriptor.NRANKS_OFFSET));
        assertEquals(HEAP, b.getLong(DeviceViewDescriptor.HEAP_BASE_OFFSET));
        assertEquals(1 << 20, b.getLong(DeviceViewDescriptor.HEAP_SIZE_BYTES_OFFSET));
        assertEquals(0x1000, b.getLong(DeviceViewDescriptor.ABORT_FLAG_OFFSET));
        assertEquals(0x2000, b.getLong(DeviceViewDescriptor.ERROR_RECORD_OFFSET));
        assertEquals(5_000_000_000L, b.getLong(DeviceViewDescriptor.TIMEOUT_NS_OFFSET));
        int[] codes = {2, 1, 0, 3, 4};
        for (int p = 0; p < links.length; p++) {
            int e = DeviceViewDescriptor.peerEntryOffset(p);
            assertEquals(codes[p], b.getInt(e + DeviceViewDescriptor.PEER_TRANSPORT_OFFSET), "peer " + p);
            assertEquals(p, b.getInt(e + DeviceViewDescriptor.PEER_RANK_OFFSET));
            assertEquals(links[p] == null ? 0 : links[p].transport().capabilityBits(),
                    b.getInt(e + DeviceViewDescriptor.PEER_CAPS_OFFSET), "peer " + p + "'s capabilities");
            PeerLink l = links[p];
            assertEquals(l == null ? 0 : l.peerHeap(), b.getLong(e + DeviceViewDescriptor.PEER_HEAP_OFFSET));
            assertEquals(l == null ? 0 : l.handle(), b.getLong(e + DeviceViewDescriptor.PEER_HANDLE_OFFSET));
            assertEquals(l == null ? 0 : 0x11, b.getInt(e + DeviceViewDescriptor.PEER_RKEY_OFFSET));
            assertEquals(l == null ? 0 : 0x22, b.getInt(e + DeviceViewDescriptor.PEER_LKEY_OFFSET));
            // The rank's own abort word is in the header, not repeated in its entry.
            assertEquals(l == null || p == 1 ? 0 : 0xabc0, b.getLong(e + DeviceViewDescriptor.PEER_ABORT_FLAG_OFFSET));
        }
    }
}
