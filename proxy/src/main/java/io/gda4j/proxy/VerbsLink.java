package io.gda4j.proxy;

import io.gda4j.nic.HostPoster;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * What a {@link VerbsHandler} needs to reach one peer through a NIC: the QP toward the peer (posted from the proxy
 * thread only), both heaps as registered once per NIC, where fetched atomic values go, and the two credit blocks
 * ({@link CreditBlockDescriptor}).
 *
 * @param localRank        the rank whose GPU pushes the triggers
 * @param peerRank         the rank the data goes to
 * @param peerDescription  for messages, e.g. "rank 1 (pid 4242 on node7)"
 * @param poster           the host poster of the connected QP toward the peer's NIC
 * @param localHeap        the local heap's address as its NIC registration names it
 * @param localLkey        lkey of the local heap registration
 * @param peerHeap         the peer's heap address as the peer's registration names it
 * @param peerRkey         rkey of the peer's heap registration
 * @param heapBytes        bytes of each heap a trigger may address
 * @param fetchAddress     where an atomic's fetched value is dropped: 0 with the null region's lkey, or a scratch word
 * @param fetchLkey        lkey for {@code fetchAddress}
 * @param relaxedOrdering  the NIC may place an 8-byte WRITE before the data ahead of it: SET signals are refused
 * @param localCredits     this side's credit block for the peer (a view of the registered memory)
 * @param peerCredits      the peer's credit block for this side, as the peer's registration names it
 * @param peerCreditsRkey  rkey of the peer's credit block
 */
public record VerbsLink(int localRank, int peerRank, String peerDescription, HostPoster poster, long localHeap,
                        int localLkey, long peerHeap, int peerRkey, long heapBytes, long fetchAddress, int fetchLkey,
                        boolean relaxedOrdering, ByteBuffer localCredits, long peerCredits, int peerCreditsRkey) {
    public VerbsLink {
        Objects.requireNonNull(poster, "poster");
        Objects.requireNonNull(localCredits, "localCredits");
        Objects.requireNonNull(peerDescription, "peerDescription");
        if (localCredits.capacity() < CreditBlockDescriptor.LENGTH) {
            throw new IllegalArgumentException("the credit block needs " + CreditBlockDescriptor.LENGTH + " bytes");
        }
    }
}
