package io.gda4j.verbs;

import java.nio.ByteOrder;

/** Converts the {@code __be64} values verbs hands out as plain integers (GUIDs) to host-order longs. */
final class NetworkOrder {
    private static final boolean LITTLE_ENDIAN_HOST = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    private NetworkOrder() {
    }

    /** A {@code __be64} read as a native long, as the number it stands for. */
    static long be64ToHost(long nativeValue) {
        return LITTLE_ENDIAN_HOST ? Long.reverseBytes(nativeValue) : nativeValue;
    }
}
