package io.gda4j.transport;

/**
 * The transport of a peer entry in the device view; the numeric codes are the {@code TRANSPORT_*} constants of
 * {@code gda4j/layout/view.cuh}.
 */
public enum TransportTag {
    /** No path to this peer: device calls to it fail with ERROR_BAD_PEER. */
    NONE(0),
    /** The rank itself: loads and stores to its own heap. */
    SELF(1),
    /** Same host: direct loads and stores into the peer's heap over NVLink or PCIe. */
    P2P(2),
    /** GPU-built mlx5 work requests and GPU-rung doorbells (real or emulated NIC). */
    IBGDA(3),
    /** 16-byte triggers to a host proxy thread (PortChannel). */
    PROXY(4);

    private final int code;

    TransportTag(int code) {
        this.code = code;
    }

    /** The value stored in {@code PeerEntry.transport}. */
    public int code() {
        return code;
    }

    public static TransportTag ofCode(int code) {
        for (TransportTag t : values()) {
            if (t.code == code) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown transport code " + code);
    }
}
