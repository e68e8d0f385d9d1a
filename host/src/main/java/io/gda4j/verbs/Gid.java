package io.gda4j.verbs;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * A 16-byte GID ({@code union ibv_gid}) in network order: the port's address on RoCE, its subnet prefix and GUID on
 * InfiniBand. Immutable.
 */
public final class Gid {
    private final byte[] raw;

    private Gid(byte[] raw) {
        this.raw = raw;
    }

    /** A GID from its 16 raw bytes (copied). */
    public static Gid of(byte[] raw) {
        if (raw.length != IbvGidDescriptor.SIZE) {
            throw new IllegalArgumentException("a GID has " + IbvGidDescriptor.SIZE + " bytes, not " + raw.length);
        }
        return new Gid(raw.clone());
    }

    /** The all-zero GID: "no GRH" when given as a peer's GID. */
    public static Gid zero() {
        return new Gid(new byte[IbvGidDescriptor.SIZE]);
    }

    public byte[] raw() {
        return raw.clone();
    }

    public boolean isZero() {
        for (byte b : raw) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }

    public long subnetPrefix() {
        return bigEndianLong(IbvGidDescriptor.SUBNET_PREFIX_OFFSET);
    }

    public long interfaceId() {
        return bigEndianLong(IbvGidDescriptor.INTERFACE_ID_OFFSET);
    }

    private long bigEndianLong(int offset) {
        long value = 0;
        for (int i = 0; i < Long.BYTES; i++) {
            value = (value << 8) | (raw[offset + i] & 0xff);
        }
        return value;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Gid that && Arrays.equals(raw, that.raw);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(raw);
    }

    /** {@code fe80:0000:0000:0000:0202:c9ff:fe00:0001}, as {@code ibv_devinfo -v} prints GIDs. */
    @Override
    public String toString() {
        String hex = HexFormat.of().formatHex(raw);
        StringBuilder text = new StringBuilder(39);
        for (int i = 0; i < hex.length(); i += 4) {
            if (i > 0) {
                text.append(':');
            }
            text.append(hex, i, i + 4);
        }
        return text.toString();
    }
}
