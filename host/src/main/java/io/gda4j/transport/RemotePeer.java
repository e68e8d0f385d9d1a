package io.gda4j.transport;

/**
 * A peer rank that lives in another process, as a transport sees it from the local rank. On this host its heap is
 * already mapped into the local GPU's context by CUDA IPC (the world owns that mapping and unmaps it after the links
 * are closed); on another host nothing of it is mapped ({@link #heapAddress()} is 0), and only a transport that
 * reaches it through a NIC can connect the pair. Nothing else of it (its context, streams, abort word) is reachable
 * from here.
 *
 * @param rank          the peer's rank
 * @param heapAddress   the peer's heap as the local GPU addresses it (the IPC mapping); 0 on another host
 * @param heapBytes     the peer's heap size
 * @param sameGpu       whether the peer's process drives the local rank's GPU
 * @param nativeAtomics whether the link between the two GPUs carries atomics (true on one GPU)
 * @param description   "rank 1 (pid 4242 on node7, GPU 0000:19:00.0)", for messages
 * @param offer         what the peer's process published for this transport
 *                      ({@link TransportProvider#offerAcrossProcesses}), or null: none (not yet exchanged, when the
 *                      world asks whether the transport can connect the pair, or the peer's process does not use it)
 * @param sameHost      whether the peer runs on this host (false: {@code heapAddress} is 0 and {@code sameGpu} false)
 * @param heapHandle    for a peer on another host, the CUDA IPC handle its process exported for its heap, or null.
 *                      It means something only on the machine that made it: where the "hosts" are processes of one
 *                      machine with host names of their own ({@code GDA4J_HOST_NAME}, for tests), the emulated NIC,
 *                      a model of a NIC inside one machine, reaches the peer's heap through it
 */
public record RemotePeer(int rank, long heapAddress, long heapBytes, boolean sameGpu, boolean nativeAtomics,
                         String description, byte[] offer, boolean sameHost, byte[] heapHandle) {

    /** A peer of this host whose heap the world mapped at {@code heapAddress}, with its offer (or null). */
    public RemotePeer(int rank, long heapAddress, long heapBytes, boolean sameGpu, boolean nativeAtomics,
                      String description, byte[] offer) {
        this(rank, heapAddress, heapBytes, sameGpu, nativeAtomics, description, offer, true, null);
    }

    /** A peer of this host whose offers are not exchanged yet. */
    public RemotePeer(int rank, long heapAddress, long heapBytes, boolean sameGpu, boolean nativeAtomics,
                      String description) {
        this(rank, heapAddress, heapBytes, sameGpu, nativeAtomics, description, null);
    }

    /**
     * A peer on another host, whose offers are not exchanged yet: nothing of it is mapped here.
     *
     * @param nativeAtomics true only where the peer's GPU is one of this machine's and linked to this rank's with
     *                      atomics (host names of their own on one machine); false across machines
     */
    public static RemotePeer onAnotherHost(int rank, long heapBytes, boolean nativeAtomics, byte[] heapHandle,
                                           String description) {
        return new RemotePeer(rank, 0, heapBytes, false, nativeAtomics, description, null, false, heapHandle);
    }

    public RemotePeer {
        offer = offer == null ? null : offer.clone();
        heapHandle = heapHandle == null ? null : heapHandle.clone();
        // (A peer of this host with address 0 is a stand-in that only asks what transports would say.)
        if (!sameHost && (heapAddress != 0 || sameGpu)) {
            throw new IllegalArgumentException(description + ": a peer on another host has no heap mapping here and"
                    + " no GPU in common with this rank's context");
        }
    }

    @Override
    public byte[] offer() {
        return offer == null ? null : offer.clone();
    }

    @Override
    public byte[] heapHandle() {
        return heapHandle == null ? null : heapHandle.clone();
    }

    /** This peer with what its process published for the transport that connects the pair (null: nothing). */
    public RemotePeer withOffer(byte[] published) {
        return new RemotePeer(rank, heapAddress, heapBytes, sameGpu, nativeAtomics, description, published, sameHost,
                heapHandle);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RemotePeer p && rank == p.rank && heapAddress == p.heapAddress
                && heapBytes == p.heapBytes && sameGpu == p.sameGpu && nativeAtomics == p.nativeAtomics
                && description.equals(p.description) && java.util.Arrays.equals(offer, p.offer)
                && sameHost == p.sameHost && java.util.Arrays.equals(heapHandle, p.heapHandle);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(rank, heapAddress, description);
    }

    @Override
    public String toString() {
        String heap = sameHost ? ", heap 0x" + Long.toHexString(heapAddress) : ", on another host";
        return "RemotePeer[" + description + heap + " +" + heapBytes
                + (offer == null ? "" : ", offer of " + offer.length + " bytes") + "]";
    }
}
