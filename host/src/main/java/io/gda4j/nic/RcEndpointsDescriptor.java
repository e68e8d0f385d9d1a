package io.gda4j.nic;

import io.gda4j.verbs.IbvGidDescriptor;

/**
 * The bytes of {@link RcEndpoints}: the endpoints ({@link QpAddress}) of the RC QPs one rank created for its pairs with
 * the ranks of other processes, each under the other rank of its pair. The transports embed them at the end of their
 * offers (ibgda's {@code ProcessOfferDescriptor}, the proxy's {@code VerbsOfferDescriptor}), which the world carries
 * on its all-gather. All integers big-endian.
 *
 * <pre>
 *  0        4         6        8
 *  +--------+---------+--------+------------------+------------------+-----
 *  | magic  | version | count  | entry 0          | entry 1          | ...
 *  +--------+---------+--------+------------------+------------------+-----
 *
 *  one entry (offsets from its start), 34 bytes plus the NIC's name:
 *  0        4        8        12     14     15     16     17      18                  34
 *  +--------+--------+--------+------+------+------+------+-------+-------------------+-------------+
 *  | rank   | qpn    | psn    | lid  | port | link | mtu  | name  | gid (16)          | NIC name    |
 *  |        |        |        |      |      | layer|      | bytes |                   | (name bytes)|
 *  +--------+--------+--------+------+------+------+------+-------+-------------------+-------------+
 * </pre>
 * count: entries (u16), one per other rank of the world, in no particular order, each rank at most once; rank: the
 * other rank of the pair, the one whose process connects to this QP; qpn and psn: 24-bit, in 4 bytes whose top byte
 * is 0; lid: 16-bit; port: from 1; link layer: {@code IBV_LINK_LAYER_*} (0 unspecified, 1 InfiniBand, 2 Ethernet);
 * mtu: {@code IBV_MTU_*} (1 = 256 to 5 = 4096 bytes) or 0 for no limit; gid: the 16 bytes of {@code union ibv_gid},
 * in network order as the port reports them (zero: no GRH); NIC name: UTF-8, at most {@link #MAX_DEVICE_BYTES}.
 */
public final class RcEndpointsDescriptor {
    /** "GDRC". */
    public static final int MAGIC = 0x47445243;
    public static final short VERSION = 1;

    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 4;
    public static final int COUNT_OFFSET = 6;
    public static final int ENTRIES_OFFSET = 8;
    public static final int MAX_ENTRIES = 0xffff;

    /** Offsets within one entry. */
    public static final int RANK_OFFSET = 0;
    public static final int QPN_OFFSET = 4;
    public static final int PSN_OFFSET = 8;
    public static final int LID_OFFSET = 12;
    public static final int PORT_OFFSET = 14;
    public static final int LINK_LAYER_OFFSET = 15;
    public static final int PATH_MTU_OFFSET = 16;
    public static final int DEVICE_BYTES_OFFSET = 17;
    public static final int GID_OFFSET = 18;
    public static final int DEVICE_OFFSET = GID_OFFSET + IbvGidDescriptor.SIZE;
    /** An entry without its NIC name. */
    public static final int ENTRY_FIXED_BYTES = DEVICE_OFFSET;
    /** {@code IBV_SYSFS_NAME_MAX}: the longest name libibverbs gives a device. */
    public static final int MAX_DEVICE_BYTES = 64;

    private RcEndpointsDescriptor() {
    }
}
