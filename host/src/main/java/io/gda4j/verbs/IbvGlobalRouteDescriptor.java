package io.gda4j.verbs;

/**
 * {@code struct ibv_global_route} (verbs.h): the GRH part of an address vector, needed on RoCE.
 * <pre>
 *   0 dgid (ibv_gid, 16 B)   16 flow_label (u32)   20 sgid_index (u8)   21 hop_limit (u8)   22 traffic_class (u8)
 *  24 end
 * </pre>
 */
public final class IbvGlobalRouteDescriptor {
    public static final int SIZE = 24;
    public static final int DGID_OFFSET = 0;
    public static final int FLOW_LABEL_OFFSET = 16;
    public static final int SGID_INDEX_OFFSET = 20;
    public static final int HOP_LIMIT_OFFSET = 21;
    public static final int TRAFFIC_CLASS_OFFSET = 22;

    private IbvGlobalRouteDescriptor() {
    }
}
