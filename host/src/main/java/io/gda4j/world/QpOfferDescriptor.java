package io.gda4j.world;

/**
 * What one process publishes for the RC connections of ibgda between hosts: for each peer, the QP it created toward
 * that peer and how the peer may write into its heap. All integers big-endian (the bootstrap's order).
 *
 * <pre>
 *  0        4         6         8       12
 *  +--------+---------+---------+-------+--------------------------------+
 *  | magic  | version | count   | rank  | count x OFFER                  |
 *  +--------+---------+---------+-------+--------------------------------+
 *
 *  OFFER (OFFER_BYTES bytes, then the device name):
 *  0      4      8      12     14             30       34          42          50        52
 *  +------+------+------+------+--------------+--------+-----------+-----------+---------+--------------+
 *  | peer | qpn  | psn  | lid  | gid (16)     | rkey   | heap base | heap size | nameLen | device UTF-8 |
 *  +------+------+------+------+--------------+--------+-----------+-----------+---------+--------------+
 * </pre>
 */
public final class QpOfferDescriptor {
    /** "GDQO". */
    public static final int MAGIC = 0x4744514f;
    public static final short VERSION = 1;

    public static final int HEADER_BYTES = 12;
    public static final int PEER_OFFSET = 0;
    public static final int QPN_OFFSET = 4;
    public static final int PSN_OFFSET = 8;
    public static final int LID_OFFSET = 12;
    public static final int GID_OFFSET = 14;
    public static final int GID_BYTES = 16;
    public static final int RKEY_OFFSET = 30;
    public static final int HEAP_BASE_OFFSET = 34;
    public static final int HEAP_BYTES_OFFSET = 42;
    public static final int NAME_LENGTH_OFFSET = 50;
    /** An offer's fixed part; the device name follows. */
    public static final int OFFER_BYTES = 52;
    public static final int MAX_NAME_BYTES = 64;

    private QpOfferDescriptor() {
    }
}
