package io.gda4j.transport;

/**
 * A peer rank that lives in another process of this host, as a transport sees it from the local rank: its heap is
 * already mapped into the local GPU's context by CUDA IPC (the world owns that mapping and unmaps it after the links
 * are closed), and nothing else of it (its context, streams, abort word) is reachable from here.
 *
 * @param rank          the peer's rank
 * @param heapAddress   the peer's heap as the local GPU addresses it (the IPC mapping)
 * @param heapBytes     the peer's heap size
 * @param sameGpu       whether the peer's process drives the local rank's GPU
 * @param nativeAtomics whether the link between the two GPUs carries atomics (true on one GPU)
 * @param description   "rank 1 (pid 4242 on node7, GPU 0000:19:00.0)", for messages
 * @param offer         what the peer's process published for this transport
 *                      ({@link TransportProvider#offerAcrossProcesses}), or null: none (not yet exchanged, when the
 *                      world asks whether the transport can connect the pair, or the peer's process does not use it)
 */
public record RemotePeer(int rank, long heapAddress, long heapBytes, boolean sameGpu, boolean nativeAtomics,
                         String description, byte[] offer) {

    /** A peer whose offers are not exchanged yet. */
    public RemotePeer(int rank, long heapAddress, long heapBytes, boolean sameGpu, boolean nativeAtomics,
                      String description) {
        this(rank, heapAddress, heapBytes, sameGpu, nativeAtomics, description, null);
    }

    public RemotePeer {
        offer = offer == null ? null : offer.clone();
    }

    @Override
    public byte[] offer() {
        return offer == null ? null : offer.clone();
    }

    /** This peer with what its process published for the transport that connects the pair (null: nothing). */
    public RemotePeer withOffer(byte[] published) {
        return new RemotePeer(rank, heapAddress, heapBytes, sameGpu, nativeAtomics, description, published);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RemotePeer p && rank == p.rank && heapAddress == p.heapAddress
                && heapBytes == p.heapBytes && sameGpu == p.sameGpu && nativeAtomics == p.nativeAtomics
                && description.equals(p.description) && java.util.Arrays.equals(offer, p.offer);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(rank, heapAddress, description);
    }

    @Override
    public String toString() {
        return "RemotePeer[" + description + ", heap 0x" + Long.toHexString(heapAddress) + " +" + heapBytes
                + (offer == null ? "" : ", offer of " + offer.length + " bytes") + "]";
    }
}
