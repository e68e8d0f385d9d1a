package io.gda4j.verbs;

/**
 * {@code struct ibv_ah_attr} (verbs.h): the address vector of an RC QP's primary path.
 * <pre>
 *   0 grh (ibv_global_route, 24 B)   24 dlid (u16)   26 sl   27 src_path_bits   28 static_rate   29 is_global
 *  30 port_num (u8 each)   32 end
 * </pre>
 */
public final class IbvAhAttrDescriptor {
    public static final int SIZE = 32;
    public static final int GRH_OFFSET = 0;
    public static final int DLID_OFFSET = 24;
    public static final int SL_OFFSET = 26;
    public static final int SRC_PATH_BITS_OFFSET = 27;
    public static final int STATIC_RATE_OFFSET = 28;
    public static final int IS_GLOBAL_OFFSET = 29;
    public static final int PORT_NUM_OFFSET = 30;

    private IbvAhAttrDescriptor() {
    }
}
