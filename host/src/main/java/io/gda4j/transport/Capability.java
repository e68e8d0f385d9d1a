package io.gda4j.transport;

/**
 * What generic code may ask of a peer's transport instead of which transport it is: the {@code GDA4J_CAPABILITY}
 * rows of {@code gda4j/transports.def}, one name on both sides. The world writes a transport's bits into each peer
 * entry ({@code PeerEntry.caps}); kernels ask them with the device calls named after them ({@code is_direct},
 * {@code sets_land_in_order}, {@code prefers_few_puts}), host code with {@link Transport#has}.
 */
public enum Capability {
    /**
     * Kernels load and store the peer's heap ({@code PeerLink.peerHeap} is the peer's heap as the local GPU addresses
     * it): nothing stands between the kernel and the peer's memory, so no staging copy is needed (SELF, p2p).
     */
    DIRECT(0),
    /**
     * Its ADDs to another rank's words are GPU atomics (p2p's {@code red.add.sys}, the proxy's atomic kernel), which
     * are not atomic with a NIC's atomics on the same word: a peer entry of this transport toward a rank whose words
     * take NIC atomics is refused ADDs ({@code world.AtomicRouting}). SELF does not carry it: a rank's own ADDs are
     * routed to its loopback object instead.
     */
    GPU_ATOMICS(1),
    /**
     * Its ADDs are NIC atomics (ibgda): a rank with links of such a transport takes every ADD through its NIC, and
     * refuses the GPU atomics of {@link #GPU_ATOMICS} transports ({@code world.AtomicRouting}).
     */
    NIC_ATOMICS(2),
    /**
     * One thread's SETs of one word land in the order it made them, so a counter with one writer may be SET to its new
     * total instead of ADDed to (a SET over the proxy is a stream write where an ADD is a kernel launch). Not over
     * ibgda, where a SET is an RDMA WRITE that a relaxed-ordering QP may place late.
     */
    SETS_LAND_IN_ORDER(3),
    /**
     * Each put costs a host call (the proxy thread makes a driver call per trigger), so kernels gather what they send
     * the peer into few large puts.
     */
    PREFERS_FEW_PUTS(4),
    /**
     * A message is put once whole, which only the block that wrote all of it knows (ibgda posts one work request per
     * message), so a rank with such a peer gives one block per token where it could otherwise split a row across
     * blocks.
     */
    PUTS_EACH_MESSAGE_FROM_ONE_BLOCK(5),
    /**
     * {@code put_inline} reaches the peer: a {@link #DIRECT} store, or a back end that writes the 16-byte slot in one
     * piece (ibgda's inline WRITE). Not over the proxy, whose copies could tear the slot.
     */
    PUT_INLINE(6),
    /**
     * The host can queue transfers into the peer's heap itself ({@link HostTransfers}, from
     * {@link PeerLink#hostTransfers()}: copies on a CUDA stream, or RDMA WRITEs that a host function queued on the
     * stream hands the proxy thread, posted as one chained post), so a protocol whose sizes the host knows moves its
     * bulk with a few transfers per peer and no trigger round trip (the proxy). Host-side only: no kernel asks it.
     */
    HOST_TRANSFERS(7);

    private final int bit;

    Capability(int bit) {
        this.bit = bit;
    }

    /** Its bit number in {@code PeerEntry.caps} ({@code CAP_<NAME> = 1 << bit} on the device). */
    public int bit() {
        return bit;
    }

    /** {@code 1 << bit()}. */
    public int mask() {
        return 1 << bit;
    }
}
