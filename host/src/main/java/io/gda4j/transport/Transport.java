package io.gda4j.transport;

import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

import static io.gda4j.transport.Capability.DIRECT;
import static io.gda4j.transport.Capability.GPU_ATOMICS;
import static io.gda4j.transport.Capability.HOST_TRANSFERS;
import static io.gda4j.transport.Capability.NIC_ATOMICS;
import static io.gda4j.transport.Capability.PREFERS_FEW_PUTS;
import static io.gda4j.transport.Capability.PUTS_EACH_MESSAGE_FROM_ONE_BLOCK;
import static io.gda4j.transport.Capability.PUT_INLINE;
import static io.gda4j.transport.Capability.SETS_LAND_IN_ORDER;

/**
 * The transport of a peer entry: the closed set of {@code gda4j/transports.def}'s {@code GDA4J_TRANSPORT} rows, in
 * its order, with each row's code ({@code PeerEntry.transport}, {@code TRANSPORT_<NAME>} on the device), the phrase
 * messages use, its {@linkplain Capability capabilities} ({@code PeerEntry.caps}) and the device view flag a rank
 * with such a peer sets. {@code TransportTableTest} compiles the table with g++ and checks every row here against it.
 *
 * <p>{@link #NONE} and {@link #SELF} are the world's (no transport serves the peer; the peer is the rank itself);
 * every other row belongs to one {@link TransportProvider}, whose {@link TransportProvider#transport()} returns it.
 * Code outside a transport's own package asks a row's capabilities, never which row it is.
 */
public enum Transport {
    NONE(0, "none", 0),
    SELF(1, "self", 0, DIRECT, SETS_LAND_IN_ORDER, PUT_INLINE),
    P2P(2, "p2p", 0, DIRECT, GPU_ATOMICS, SETS_LAND_IN_ORDER, PUT_INLINE),
    PROXY(4, "the proxy", 1, GPU_ATOMICS, SETS_LAND_IN_ORDER, PREFERS_FEW_PUTS,
            HOST_TRANSFERS),
    IBGDA(3, "ibgda", 2, NIC_ATOMICS, PUTS_EACH_MESSAGE_FROM_ONE_BLOCK, PUT_INLINE);

    private final int code;
    private final String phrase;
    private final int viewFlag;
    private final Set<Capability> capabilities;

    Transport(int code, String phrase, int viewFlag, Capability... capabilities) {
        this.code = code;
        this.phrase = phrase;
        this.viewFlag = viewFlag;
        EnumSet<Capability> set = EnumSet.noneOf(Capability.class);
        set.addAll(Arrays.asList(capabilities));
        this.capabilities = Collections.unmodifiableSet(set);
    }

    /** The name users type ({@code GDA4J_TRANSPORT=p2p}), the table's lower-case name; {@link #toString()} is {@code P2P}. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The value stored in {@code PeerEntry.transport}. */
    public int code() {
        return code;
    }

    /** How messages name the path after "over": "the proxy", "p2p". */
    public String phrase() {
        return phrase;
    }

    /** The device view's header flag bit a rank sets when a peer of its is of this transport, 0 for none. */
    public int viewFlag() {
        return viewFlag;
    }

    public boolean has(Capability capability) {
        return capabilities.contains(capability);
    }

    public Set<Capability> capabilities() {
        return capabilities;
    }

    /** The value stored in {@code PeerEntry.caps}: the {@link Capability#mask()} of each capability. */
    public int capabilityBits() {
        int bits = 0;
        for (Capability c : capabilities) {
            bits |= c.mask();
        }
        return bits;
    }

    /** The row users name {@code label} ({@link #label()}, any case), or empty for {@code auto} or another word. */
    public static Optional<Transport> ofLabel(String label) {
        for (Transport t : values()) {
            if (t.label().equalsIgnoreCase(label.strip())) {
                return Optional.of(t);
            }
        }
        return Optional.empty();
    }

    /** The row stored as {@code code} in a peer entry, or empty for a code the table does not list. */
    public static Optional<Transport> ofCode(long code) {
        for (Transport t : values()) {
            if (t.code == code) {
                return Optional.of(t);
            }
        }
        return Optional.empty();
    }
}
