package io.gda4j.transport;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One process's transport offers (layout: {@link TransportOffersDescriptor}): what each transport it connects pairs
 * through told the other processes, and whether its rank takes ADDs only through a NIC.
 *
 * @param rank       the publishing rank
 * @param nicAtomics whether the rank's own ADDs go through its NIC ({@code world.AtomicRouting})
 * @param offers     by transport name, in the order published
 */
public record TransportOffers(int rank, boolean nicAtomics, Map<String, byte[]> offers) {

    public TransportOffers {
        Map<String, byte[]> copy = new LinkedHashMap<>();
        offers.forEach((name, bytes) -> copy.put(Objects.requireNonNull(name), bytes.clone()));
        offers = java.util.Collections.unmodifiableMap(copy);
    }

    /** What the rank published for {@code transport}, or null. */
    public byte[] offer(String transport) {
        byte[] b = offers.get(transport);
        return b == null ? null : b.clone();
    }

    public byte[] encode() {
        int length = TransportOffersDescriptor.OFFERS_OFFSET;
        for (Map.Entry<String, byte[]> e : offers.entrySet()) {
            int name = e.getKey().getBytes(StandardCharsets.UTF_8).length;
            if (name > TransportOffersDescriptor.MAX_NAME_BYTES || e.getValue().length
                    > TransportOffersDescriptor.MAX_OFFER_BYTES) {
                throw new IllegalArgumentException("transport " + e.getKey() + "'s offer of " + e.getValue().length
                        + " bytes: names of at most " + TransportOffersDescriptor.MAX_NAME_BYTES + " bytes, offers of"
                        + " at most " + TransportOffersDescriptor.MAX_OFFER_BYTES);
            }
            length += 2 + name + 4 + e.getValue().length;
        }
        ByteBuffer b = ByteBuffer.allocate(length);
        b.putInt(TransportOffersDescriptor.MAGIC).putShort(TransportOffersDescriptor.VERSION)
                .putShort(nicAtomics ? TransportOffersDescriptor.FLAG_NIC_ATOMICS : 0).putInt(rank)
                .putShort((short) offers.size());
        for (Map.Entry<String, byte[]> e : offers.entrySet()) {
            byte[] name = e.getKey().getBytes(StandardCharsets.UTF_8);
            b.putShort((short) name.length).put(name).putInt(e.getValue().length).put(e.getValue());
        }
        return b.array();
    }

    /**
     * Reads what rank {@code from} published.
     *
     * @throws TransportSetupException naming {@code from} when the bytes are not transport offers of this version
     */
    public static TransportOffers decode(int from, byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        try {
            int magic = b.getInt();
            short version = b.getShort();
            if (magic != TransportOffersDescriptor.MAGIC || version != TransportOffersDescriptor.VERSION) {
                throw new TransportSetupException(String.format("rank %d published no gda4j transport offers of"
                        + " version %d (magic 0x%08x, version %d): every process of a job must run the same gda4j"
                        + " version", from, TransportOffersDescriptor.VERSION, magic, version));
            }
            short flags = b.getShort();
            int rank = b.getInt();
            if (rank != from) {
                throw new TransportSetupException("rank " + from + "'s transport offers say they are rank " + rank
                        + "'s");
            }
            int count = Short.toUnsignedInt(b.getShort());
            Map<String, byte[]> offers = new LinkedHashMap<>();
            for (int i = 0; i < count; i++) {
                int nameLength = Short.toUnsignedInt(b.getShort());
                if (nameLength > TransportOffersDescriptor.MAX_NAME_BYTES) {
                    throw new IllegalArgumentException("a transport name of " + nameLength + " bytes");
                }
                byte[] name = new byte[nameLength];
                b.get(name);
                int length = b.getInt();
                if (length < 0 || length > TransportOffersDescriptor.MAX_OFFER_BYTES) {
                    throw new IllegalArgumentException("an offer of " + Integer.toUnsignedString(length) + " bytes");
                }
                byte[] offer = new byte[length];
                b.get(offer);
                if (offers.put(new String(name, StandardCharsets.UTF_8), offer) != null) {
                    throw new IllegalArgumentException("two offers of transport "
                            + new String(name, StandardCharsets.UTF_8));
                }
            }
            if (b.hasRemaining()) {
                throw new IllegalArgumentException(b.remaining() + " bytes after the last offer");
            }
            return new TransportOffers(rank, (flags & TransportOffersDescriptor.FLAG_NIC_ATOMICS) != 0, offers);
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            throw new TransportSetupException("rank " + from + "'s transport offers of " + bytes.length
                    + " bytes are cut short or malformed (" + e + ")", e);
        }
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof TransportOffers t) || rank != t.rank || nicAtomics != t.nicAtomics
                || !offers.keySet().equals(t.offers.keySet())) {
            return false;
        }
        return offers.entrySet().stream().allMatch(e -> Arrays.equals(e.getValue(), t.offers.get(e.getKey())));
    }

    @Override
    public int hashCode() {
        return Objects.hash(rank, nicAtomics, offers.keySet());
    }

    @Override
    public String toString() {
        return "TransportOffers[rank " + rank + (nicAtomics ? ", NIC atomics" : "") + ", " + offers.keySet() + "]";
    }
}
