package io.gda4j.verbs;

import com.sun.jna.Pointer;

/**
 * The parts of {@code struct ibv_port_attr} gda4j uses ({@link RdmaContext#queryPort(int)}); all lie in the prefix
 * the exported {@code ibv_query_port} fills.
 *
 * @param state          {@code IBV_PORT_*}; only ACTIVE carries traffic
 * @param maxMtu         {@code IBV_MTU_*}
 * @param activeMtu      {@code IBV_MTU_*}: the path MTU of a QP must not exceed it
 * @param gidTableLength gid_tbl_len: valid GID indexes are below it
 * @param portCapFlags   port_cap_flags
 * @param maxMessageSize max_msg_sz, bytes (unsigned)
 * @param lid            the port's LID (InfiniBand; 0 on RoCE)
 * @param smLid          the subnet manager's LID
 * @param activeWidth    active_width
 * @param activeSpeed    active_speed
 * @param physState      phys_state
 * @param linkLayer      {@code IBV_LINK_LAYER_*}: Ethernet means RoCE, which needs a GID and a GRH
 * @param flags          flags
 */
public record PortAttributes(int state, int maxMtu, int activeMtu, int gidTableLength, int portCapFlags,
                             long maxMessageSize, int lid, int smLid, int activeWidth, int activeSpeed,
                             int physState, int linkLayer, int flags) {

    public boolean isActive() {
        return state == VerbsConstants.IBV_PORT_ACTIVE;
    }

    public boolean isEthernet() {
        return linkLayer == VerbsConstants.IBV_LINK_LAYER_ETHERNET;
    }

    /** Reads a filled {@code struct ibv_port_attr}. */
    static PortAttributes read(Pointer attr) {
        return new PortAttributes(attr.getInt(IbvPortAttrDescriptor.STATE_OFFSET),
                attr.getInt(IbvPortAttrDescriptor.MAX_MTU_OFFSET),
                attr.getInt(IbvPortAttrDescriptor.ACTIVE_MTU_OFFSET),
                attr.getInt(IbvPortAttrDescriptor.GID_TBL_LEN_OFFSET),
                attr.getInt(IbvPortAttrDescriptor.PORT_CAP_FLAGS_OFFSET),
                Integer.toUnsignedLong(attr.getInt(IbvPortAttrDescriptor.MAX_MSG_SZ_OFFSET)),
                Short.toUnsignedInt(attr.getShort(IbvPortAttrDescriptor.LID_OFFSET)),
                Short.toUnsignedInt(attr.getShort(IbvPortAttrDescriptor.SM_LID_OFFSET)),
                Byte.toUnsignedInt(attr.getByte(IbvPortAttrDescriptor.ACTIVE_WIDTH_OFFSET)),
                Byte.toUnsignedInt(attr.getByte(IbvPortAttrDescriptor.ACTIVE_SPEED_OFFSET)),
                Byte.toUnsignedInt(attr.getByte(IbvPortAttrDescriptor.PHYS_STATE_OFFSET)),
                Byte.toUnsignedInt(attr.getByte(IbvPortAttrDescriptor.LINK_LAYER_OFFSET)),
                Byte.toUnsignedInt(attr.getByte(IbvPortAttrDescriptor.FLAGS_OFFSET)));
    }
}
