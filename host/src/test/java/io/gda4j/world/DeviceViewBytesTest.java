package io.gda4j.world;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gda4j.ibgda.IbgdaTransport;
import io.gda4j.p2p.P2pTransport;
import io.gda4j.transport.PeerLink;
import io.gda4j.transport.ProxyTagTwin;
import io.gda4j.transport.TransportTag;

import java.nio.ByteBuffer;

import org.junit.jupiter.api.Test;

/**
 * The device view a rank copies to its GPU ({@link Rank#deviceView}), built without a GPU: the header's flags come
 * from the links' tags ({@link TransportTag#viewFlags()}), not from the world knowing which transport sets which.
 */
class DeviceViewBytesTest {
    static final long HEAP = 0x7f00_0000_0000L;

    static PeerLink link(TransportTag tag, long peerHeap, long handle) {
        return new PeerLink(tag, peerHeap, handle, 0x11, 0x22, 0xabc0, null);
    }

    static int flags(PeerLink... links) {
        return Rank.deviceView(0, links, HEAP, 1 << 20, 0x1000, 0x2000, 5).getInt(DeviceViewDescriptor.FLAGS_OFFSET);
    }

    @Test
    void headerFlagsAreTheUnionOfThePeersTags() {
        PeerLink self = link(TransportTag.SELF, HEAP, 0);
        PeerLink p2p = link(P2pTransport.TAG, 0x7e00_0000_0000L, P2pTransport.NO_NATIVE_ATOMICS);
        PeerLink ibgda = link(IbgdaTransport.TAG, 0, 0x5000);
        PeerLink proxy = link(ProxyTagTwin.TAG, 0, 0x6000);
        assertEquals(0, flags(self, p2p, null), "self, p2p and no link set no flag");
        assertEquals(DeviceViewDescriptor.FLAG_IBGDA, flags(self, ibgda, p2p));
        assertEquals(DeviceViewDescriptor.VIEW_FLAG_PROXY_PEERS, flags(self, proxy, proxy));
        assertEquals(DeviceViewDescriptor.VIEW_FLAG_PROXY_PEERS | DeviceViewDescriptor.FLAG_IBGDA,
                flags(self, p2p, null, ibgda, proxy));
        assertEquals(0, flags(new PeerLink[] {null, null}), "a rank without links");
    }

    @Test
    void headerAndEntriesCarryTheRankAndEachLink() {
        PeerLink[] links = {link(P2pTransport.TAG, 0x7e00_0000_0000L, 1), link(TransportTag.SELF, HEAP, 0), null,
            link(IbgdaTransport.TAG, 0, 0x5000), link(ProxyTagTwin.TAG, 0, 0x6000)};
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
