package io.gda4j.nic;

import java.util.EnumSet;
import java.util.Set;

/**
 * What a registered region allows, as {@code IBV_ACCESS_*} flags do (the codes are theirs, so {@code Mlx5Nic}
 * passes {@link #flags} to {@code ibv_reg_mr} unchanged). Local read access is implicit, as in verbs.
 */
public enum NicAccess {
    /** The NIC may write the region for a local data segment (RDMA READ results, fetched atomic values). */
    LOCAL_WRITE(1),
    /** A peer may RDMA WRITE into the region. */
    REMOTE_WRITE(2),
    /** A peer may RDMA READ from the region. */
    REMOTE_READ(4),
    /** A peer may run 8-byte atomics on the region. */
    REMOTE_ATOMIC(8),
    /**
     * The NIC may write the region with PCIe relaxed ordering ({@code IBV_ACCESS_RELAXED_ORDERING}): its writes into
     * it may become visible out of order, so a later 8-byte WRITE (a signal) can be seen before the data written
     * before it; an atomic or a READ cannot pass them. The target's registration decides, not the poster.
     */
    RELAXED_ORDERING(1 << 20);

    /** Everything a symmetric heap needs: the peer writes, reads and atomically updates it. */
    public static final Set<NicAccess> HEAP = Set.of(LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ, REMOTE_ATOMIC);

    private final int ibvFlag;

    NicAccess(int ibvFlag) {
        this.ibvFlag = ibvFlag;
    }

    /** The {@code IBV_ACCESS_*} bit. */
    public int ibvFlag() {
        return ibvFlag;
    }

    /** The {@code IBV_ACCESS_*} word of a set. */
    public static int flags(Set<NicAccess> access) {
        int flags = 0;
        for (NicAccess a : access) {
            flags |= a.ibvFlag;
        }
        return flags;
    }

    /**
     * The 16-bit form the offers that processes publish carry (ibgda's, the proxy verbs handler's): the
     * {@code IBV_ACCESS_*} bits, with relaxed ordering (bit 20 there, past 16 bits) as bit 15.
     */
    public static final int OFFER_RELAXED_ORDERING = 1 << 15;

    /** {@code access} in the 16-bit offer form ({@link #OFFER_RELAXED_ORDERING}). */
    public static int offerBits(Set<NicAccess> access) {
        int bits = 0;
        for (NicAccess a : access) {
            bits |= a.offerBit();
        }
        return bits;
    }

    /** The bits of the 16-bit offer form {@code bits} that name no right (0: none). */
    public static int unknownOfferBits(int bits) {
        for (NicAccess a : values()) {
            bits &= ~a.offerBit();
        }
        return bits;
    }

    /**
     * The rights of the 16-bit offer form {@code bits}.
     *
     * @throws IllegalArgumentException where a bit names no right (check {@link #unknownOfferBits} first to say whose
     *                                  offer it was)
     */
    public static Set<NicAccess> ofOfferBits(int bits) {
        if (unknownOfferBits(bits) != 0) {
            throw new IllegalArgumentException(String.format("unknown access bits 0x%x", unknownOfferBits(bits)));
        }
        Set<NicAccess> access = EnumSet.noneOf(NicAccess.class);
        for (NicAccess a : values()) {
            if ((bits & a.offerBit()) != 0) {
                access.add(a);
            }
        }
        return access;
    }

    private int offerBit() {
        return this == RELAXED_ORDERING ? OFFER_RELAXED_ORDERING : ibvFlag;
    }
}
