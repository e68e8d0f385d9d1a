package io.gda4j.moe.ht;

/**
 * How the pairs of a world's ranks reach each other, as far as the high-throughput calls care: it decides which
 * protocol a world can run ({@link MoeRowPath#resolve(PeerPaths)}). io.gda4j.moe.MoeBuffer finds it once, with every
 * process of the world, since the heap layout depends on it.
 */
public enum PeerPaths {
    /** Every pair is p2p or self (Capability.DIRECT): the kernels load and store the peers' heaps. */
    DIRECT,
    /**
     * Every pair is p2p, self, or of a transport whose host queues transfers into the peer's heap itself
     * (Capability.HOST_TRANSFERS: the proxy), and at least one is of the last kind.
     */
    HOST_TRANSFERS,
    /** Some pair is neither (ibgda): its puts are the GPU's, and only the ring protocol serves it. */
    RINGS
}
