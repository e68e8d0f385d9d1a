package io.gda4j.transport;

/**
 * What each process of a multi-process world publishes on the bootstrap's second all-gather, after the transports of
 * its pairs are chosen and before any is connected: for each transport it connects a pair through, that transport's
 * offer ({@link TransportProvider#offerAcrossProcesses}), and whether its rank takes ADDs only
 * through a NIC ({@code world.AtomicRouting}: its peers over a NIC_ATOMICS transport add to its words with NIC
 * atomics). All integers big-endian
 * (the bootstrap's order).
 *
 * <pre>
 *  0        4         6         8       12
 *  +--------+---------+---------+-------+----------------------------------------+
 *  | magic  | version | flags   | rank  | count (2) | count x OFFER                |
 *  +--------+---------+---------+-------+----------------------------------------+
 *
 *  OFFER: | nameLen (2) | transport name UTF-8 | length (4) | the transport's bytes |
 * </pre>
 */
public final class TransportOffersDescriptor {
    /** "GDTO". */
    public static final int MAGIC = 0x4744544f;
    public static final short VERSION = 1;

    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 4;
    public static final int FLAGS_OFFSET = 6;
    public static final int RANK_OFFSET = 8;
    public static final int COUNT_OFFSET = 12;
    public static final int OFFERS_OFFSET = 14;
    public static final int MAX_NAME_BYTES = 64;
    /** An offer's bytes: far more than any transport needs (IPC handles, keys), far less than the bootstrap's frame. */
    public static final int MAX_OFFER_BYTES = 1 << 16;

    /** {@code flags} bit: the rank's own ADDs go through its NIC, so a GPU-atomic ADD to it is refused. */
    public static final short FLAG_NIC_ATOMICS = 1;

    private TransportOffersDescriptor() {
    }
}
