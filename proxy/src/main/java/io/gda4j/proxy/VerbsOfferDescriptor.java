package io.gda4j.proxy;

import io.gda4j.nic.NicAccess;

/**
 * What a rank's process publishes so that the verbs handlers of other processes can reach it ({@link VerbsOffer},
 * carried by the world's transport offers under the name {@code proxy}): its heap as its NIC registered it (key,
 * address, length, rights), its credit blocks (one {@link CreditBlockDescriptor} per rank of the world, in one
 * registration: the block it keeps for rank {@code r} at {@code creditsAddress + r * 64}), then what its kind of NIC
 * needs to connect a pair:
 * <ul>
 *   <li>over a NIC that connects by QP number (mlx5): the endpoints of the RC QPs this rank created for its pairs,
 *       one per other rank ({@link io.gda4j.nic.RcEndpointsDescriptor}, {@link io.gda4j.nic.RcExchange}); both
 *       handles are empty (length 0): the peer's NIC writes the credit blocks by rkey;</li>
 *   <li>over the emulated NIC (one host): how another process maps the memory its emulated NIC acts on, the credit
 *       blocks and the atomic lock line that every process's NIC takes before an atomic on this heap
 *       ({@code SoftwareNic.serializeAtomics}); no QP number (the emulated responder has no QP of its own), so the
 *       endpoint table is empty.</li>
 * </ul>
 * All integers big-endian.
 *
 * <pre>
 *  0        4         6        8          12                 20                 28            32
 *  +--------+---------+--------+----------+------------------+------------------+-------------+
 *  | magic  | version | access | heapRkey | heap address     | heap bytes       | creditsRkey |
 *  +--------+---------+--------+----------+------------------+------------------+-------------+
 *  32                  40              44             46
 *  +-------------------+---------------+--------------+----------------+--------------+-------------+
 *  | credits address   | credit blocks | creditsLen   | credits handle | lockLen (2)  | lock handle |
 *  +-------------------+---------------+--------------+----------------+--------------+-------------+
 *  +-------------------------------------------------------------------+
 *  | RC endpoints (RcEndpointsDescriptor: 8 bytes + one entry per other |
 *  | rank; count 0 for the emulated NIC)                                |
 *  +-------------------------------------------------------------------+
 * </pre>
 * access: the heap registration's {@code IBV_ACCESS_*} bits, relaxed ordering ({@code 1 << 20}) carried as bit 15
 * ({@link #ACCESS_RELAXED_ORDERING}), as in ibgda's offer; addresses: as the publishing process addresses them (what
 * WQEs name, as on the wire); the handles: {@link CrossProcessMemory.Exported#handle()} of the credit blocks and of
 * the lock line, each at most {@link #MAX_HANDLE_BYTES}.
 */
public final class VerbsOfferDescriptor {
    /** "GDVP". */
    public static final int MAGIC = 0x47445650;
    /** 2: the RC endpoints were added at the end. */
    public static final short VERSION = 2;

    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 4;
    public static final int ACCESS_OFFSET = 6;
    /** The access field's bit for {@code IBV_ACCESS_RELAXED_ORDERING}, which 16 bits cannot hold as it is. */
    public static final int ACCESS_RELAXED_ORDERING = NicAccess.OFFER_RELAXED_ORDERING;
    public static final int HEAP_RKEY_OFFSET = 8;
    public static final int HEAP_ADDRESS_OFFSET = 12;
    public static final int HEAP_BYTES_OFFSET = 20;
    public static final int CREDITS_RKEY_OFFSET = 28;
    public static final int CREDITS_ADDRESS_OFFSET = 32;
    public static final int CREDIT_BLOCKS_OFFSET = 40;
    /** Where the credits handle's 2-byte length is; the handle follows, then the lock handle's length and bytes. */
    public static final int CREDITS_HANDLE_OFFSET = 44;
    public static final int MAX_HANDLE_BYTES = 256;

    private VerbsOfferDescriptor() {
    }

    /** The offer's length with handles of these lengths, up to its RC endpoints. */
    public static int length(int creditsHandleBytes, int lockHandleBytes) {
        return CREDITS_HANDLE_OFFSET + 2 + creditsHandleBytes + 2 + lockHandleBytes;
    }
}
