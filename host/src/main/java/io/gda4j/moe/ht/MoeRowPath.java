package io.gda4j.moe.ht;

/**
 * What moves a high-throughput call's rows: io.gda4j.moe.MoeConfig.Builder#rowPath. Every path gives the same
 * outputs, bit for bit. Which ones a world can take depends on how its ranks reach each other ({@link PeerPaths}).
 */
public enum MoeRowPath {
    /**
     * The buffer chooses per world: the SMs where every pair is p2p or self (the path measured on GPUs of one host);
     * the copy engines over the proxy (host-queued transfers, a few per peer and call, no trigger round trip), unless
     * the heap is too small for their layout, when the rings stay; the rings where some pair is ibgda.
     */
    AUTO,
    /**
     * The SMs: in a world of p2p pairs each row is stored straight into its place at the peer (a warp loads a token's
     * row once and stores it to every rank that gets it), and a combine pulls or pushes the rows back the same way;
     * in a world with a proxy or ibgda pair, the ring protocol (rows packed into rings, credits from the receiver, one
     * put per chunk), which is how to force the rings over the proxy.
     */
    SM,
    /**
     * The copy engines: a kernel on the buffer's blocks packs each destination's rows contiguously (this rank's own go
     * straight into its received tensors), then per peer one copy per received array behind it on the call's stream,
     * the last followed by the call's sequence in the peer's done word, and a one-block kernel waits for every peer's;
     * the combine copies each source's rows back in one copy and sums them on the buffer's blocks. The sizes come from
     * the layout, so the host waits for the layout's exchange (not for any call) before a dispatch's first copy. Over
     * the proxy the host queues the same transfers through the link (io.gda4j.transport.HostTransfers): copies on the
     * call's stream for the copy-engine handler, one chained post of RDMA WRITEs per peer for the verbs handler, handed
     * over by a host function on the stream. Graphs capture the copies as memcpy nodes and the posts as host nodes.
     * Refused where some pair is ibgda.
     */
    COPY_ENGINE;

    /**
     * The path a world of {@code paths} gets: AUTO resolves to the SMs in a direct world and to the copy engines over
     * the proxy, and only the rings (SM) serve a world with an ibgda pair. The heap's room is not asked here: the
     * buffer's constructor ({@link HighThroughputBuffer#HighThroughputBuffer}) asks it.
     */
    public MoeRowPath resolve(PeerPaths paths) {
        return switch (paths) {
            case DIRECT -> this == AUTO ? SM : this;
            case HOST_TRANSFERS -> this == AUTO ? COPY_ENGINE : this;
            case RINGS -> SM;
        };
    }
}
