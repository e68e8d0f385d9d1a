package io.gda4j.nic;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The endpoints of the RC QPs one rank created for its pairs with the ranks of other processes, by the other rank of
 * each pair (layout: {@link RcEndpointsDescriptor}); what {@link RcExchange} publishes and reads. Empty for a NIC that
 * connects processes without QP numbers (the emulated NIC).
 *
 * @param byRank the endpoint of the QP for the pair with each rank
 */
public record RcEndpoints(Map<Integer, QpAddress> byRank) {
    public static final RcEndpoints NONE = new RcEndpoints(Map.of());

    public RcEndpoints {
        if (byRank.size() > RcEndpointsDescriptor.MAX_ENTRIES) {
            throw new IllegalArgumentException("at most " + RcEndpointsDescriptor.MAX_ENTRIES + " endpoints, not "
                    + byRank.size());
        }
        byRank.keySet().forEach(rank -> {
            if (rank < 0) {
                throw new IllegalArgumentException("an endpoint for rank " + rank);
            }
        });
        byRank = Collections.unmodifiableMap(new TreeMap<>(byRank));
    }

    /** The endpoint of the QP for the pair with {@code rank}, if there is one. */
    public Optional<QpAddress> forRank(int rank) {
        return Optional.ofNullable(byRank.get(rank));
    }

    public boolean isEmpty() {
        return byRank.isEmpty();
    }

    /** Bytes {@link #encodeTo} writes. */
    public int encodedBytes() {
        int bytes = RcEndpointsDescriptor.ENTRIES_OFFSET;
        for (QpAddress a : byRank.values()) {
            bytes += RcEndpointsDescriptor.QPN_OFFSET + a.encodedBytes();
        }
        return bytes;
    }

    public byte[] encode() {
        ByteBuffer b = ByteBuffer.allocate(encodedBytes());
        encodeTo(b);
        return b.array();
    }

    /** Writes the table at {@code out}'s position (an offer that embeds it). */
    public void encodeTo(ByteBuffer out) {
        out.putInt(RcEndpointsDescriptor.MAGIC).putShort(RcEndpointsDescriptor.VERSION)
                .putShort((short) byRank.size());
        byRank.forEach((rank, address) -> {
            out.putInt(rank);
            address.encodeTo(out);
        });
    }

    /**
     * Reads a whole table that {@code from} published.
     *
     * @throws IllegalArgumentException naming {@code from} when the bytes are no table of this version, a field is out
     *                                  of range, they end early or go on after it
     */
    public static RcEndpoints decode(String from, byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        RcEndpoints table = decodeFrom(from, b);
        if (b.hasRemaining()) {
            throw new IllegalArgumentException(from + "'s RC endpoints have " + b.remaining()
                    + " bytes after the last entry");
        }
        return table;
    }

    /**
     * Reads a table at {@code in}'s position (an offer that embeds it), leaving the position after it.
     *
     * @throws IllegalArgumentException as {@link #decode}, except for bytes after the table (the offer's to judge)
     */
    public static RcEndpoints decodeFrom(String from, ByteBuffer in) {
        try {
            int magic = in.getInt();
            short version = in.getShort();
            if (magic != RcEndpointsDescriptor.MAGIC || version != RcEndpointsDescriptor.VERSION) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "%s published no RC endpoints of version"
                        + " %d (magic 0x%08x, version %d): every process of a job must run the same gda4j version",
                        from, RcEndpointsDescriptor.VERSION, magic, version));
            }
            int count = Short.toUnsignedInt(in.getShort());
            Map<Integer, QpAddress> byRank = new TreeMap<>();
            for (int i = 0; i < count; i++) {
                int rank = in.getInt();
                QpAddress address;
                try {
                    address = QpAddress.decodeFrom(in);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(from + "'s RC endpoint for rank " + rank + " is malformed: "
                            + e.getMessage(), e);
                }
                if (rank < 0) {
                    throw new IllegalArgumentException(from + " published an RC endpoint for rank " + rank);
                }
                if (byRank.put(rank, address) != null) {
                    throw new IllegalArgumentException(from + " published two RC endpoints for rank " + rank);
                }
            }
            return new RcEndpoints(byRank);
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException(from + "'s RC endpoints are cut short", e);
        }
    }

    @Override
    public String toString() {
        return "RcEndpoints" + byRank;
    }
}
