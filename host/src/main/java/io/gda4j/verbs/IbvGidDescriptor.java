package io.gda4j.verbs;

/**
 * {@code union ibv_gid} (verbs.h): 16 raw bytes in network order.
 * <pre>
 *   0 raw[16] = global.subnet_prefix (BE64) | 8 global.interface_id (BE64) | 16 end
 * </pre>
 */
public final class IbvGidDescriptor {
    public static final int SIZE = 16;
    public static final int RAW_OFFSET = 0;
    public static final int SUBNET_PREFIX_OFFSET = 0;
    public static final int INTERFACE_ID_OFFSET = 8;

    private IbvGidDescriptor() {
    }
}
