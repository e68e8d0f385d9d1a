package io.gda4j.ibgda;

import io.gda4j.cuda.IpcMemory;
import io.gda4j.nic.NicAccess;
import io.gda4j.nic.RcEndpointsDescriptor;

/**
 * What ibgda publishes for the ranks of other processes ({@link ProcessOffer}, carried by
 * {@code io.gda4j.transport.TransportOffers}): this rank's heap as its NIC registered it (key, address range, rights),
 * then what its kind of NIC needs to connect a pair:
 * <ul>
 *   <li>over a NIC that connects by QP number (mlx5): the endpoints of the RC QPs this rank created for its pairs,
 *       one per other rank ({@link RcEndpointsDescriptor}, {@link io.gda4j.nic.RcExchange}); lock
 *       offset and NIC words handle are zero;</li>
 *   <li>over the emulated NIC: the atomic lock line ({@code SoftwareNic.serializeAtomics}) in this rank's NIC words,
 *       which a requester's engine maps by CUDA IPC to act on this heap as this rank's NIC would; no QP number (the
 *       emulated responder has no QP of its own, see {@code RemoteResponder}), so the endpoint table is empty.</li>
 * </ul>
 * All integers big-endian.
 *
 * <pre>
 *  0        4         6        8          12                 20                 28            32
 *  +--------+---------+--------+----------+------------------+------------------+-------------+
 *  | magic  | version | access | heapRkey | heap address     | heap bytes       | lock offset |
 *  +--------+---------+--------+----------+------------------+------------------+-------------+
 *  32                                                            96
 *  +-------------------------------------------------------------+--------------------------------------+
 *  | NIC words IPC handle (64): cuIpcGetMemHandle of the words     | RC endpoints (RcEndpointsDescriptor:  |
 *  |                                                               | 8 bytes + one entry per other rank)   |
 *  +-------------------------------------------------------------+--------------------------------------+
 * </pre>
 * access: the heap registration's {@code IBV_ACCESS_*} bits ({@link io.gda4j.nic.NicAccess#flags}), except relaxed
 * ordering ({@code 1 << 20}, past 16 bits), carried as bit 15 ({@link #ACCESS_RELAXED_ORDERING}); heap address: as
 * this rank's process addresses it (what WQEs name, as on the wire); lock offset: of the lock line in the words.
 */
public final class ProcessOfferDescriptor {
    /** "GDIO". */
    public static final int MAGIC = 0x4744494f;
    /** 2: the RC endpoints were added at the end. */
    public static final short VERSION = 2;

    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 4;
    /** The access field's bit for {@code IBV_ACCESS_RELAXED_ORDERING}, which 16 bits cannot hold as it is. */
    public static final int ACCESS_RELAXED_ORDERING = NicAccess.OFFER_RELAXED_ORDERING;
    public static final int ACCESS_OFFSET = 6;
    public static final int HEAP_RKEY_OFFSET = 8;
    public static final int HEAP_ADDRESS_OFFSET = 12;
    public static final int HEAP_BYTES_OFFSET = 20;
    public static final int LOCK_OFFSET_OFFSET = 28;
    public static final int WORDS_HANDLE_OFFSET = 32;
    public static final int WORDS_HANDLE_BYTES = IpcMemory.HANDLE_BYTES;
    public static final int ENDPOINTS_OFFSET = WORDS_HANDLE_OFFSET + WORDS_HANDLE_BYTES;
    /** The length of an offer with an empty endpoint table (the emulated NIC's). */
    public static final int LENGTH_WITHOUT_ENDPOINTS = ENDPOINTS_OFFSET + RcEndpointsDescriptor.ENTRIES_OFFSET;

    private ProcessOfferDescriptor() {
    }
}
