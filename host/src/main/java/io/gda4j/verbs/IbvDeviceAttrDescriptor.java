package io.gda4j.verbs;

/**
 * {@code struct ibv_device_attr} (verbs.h), filled by {@code ibv_query_device}; host byte order except the GUIDs.
 * Only the fields gda4j reads are named.
 * <pre>
 *   0 fw_ver[64]          64 node_guid (BE64)   72 sys_image_guid (BE64)   80 max_mr_size (u64)
 *  88 page_size_cap (u64) 96 vendor_id          100 vendor_part_id         104 hw_ver
 * 108 max_qp             112 max_qp_wr          116 device_cap_flags       120 max_sge
 * 128 max_cq             132 max_cqe            136 max_mr                 140 max_pd
 * 144 max_qp_rd_atom     156 max_qp_init_rd_atom 164 atomic_cap            227 phys_port_cnt (u8)
 * 232 end
 * </pre>
 */
public final class IbvDeviceAttrDescriptor {
    public static final int SIZE = 232;
    public static final int FW_VER_OFFSET = 0;
    public static final int FW_VER_LENGTH = 64;
    public static final int NODE_GUID_OFFSET = 64;
    public static final int SYS_IMAGE_GUID_OFFSET = 72;
    public static final int MAX_MR_SIZE_OFFSET = 80;
    public static final int PAGE_SIZE_CAP_OFFSET = 88;
    public static final int VENDOR_ID_OFFSET = 96;
    public static final int VENDOR_PART_ID_OFFSET = 100;
    public static final int HW_VER_OFFSET = 104;
    public static final int MAX_QP_OFFSET = 108;
    public static final int MAX_QP_WR_OFFSET = 112;
    public static final int DEVICE_CAP_FLAGS_OFFSET = 116;
    public static final int MAX_SGE_OFFSET = 120;
    public static final int MAX_CQ_OFFSET = 128;
    public static final int MAX_CQE_OFFSET = 132;
    public static final int MAX_MR_OFFSET = 136;
    public static final int MAX_PD_OFFSET = 140;
    public static final int MAX_QP_RD_ATOM_OFFSET = 144;
    public static final int MAX_QP_INIT_RD_ATOM_OFFSET = 156;
    public static final int ATOMIC_CAP_OFFSET = 164;
    public static final int PHYS_PORT_CNT_OFFSET = 227;

    private IbvDeviceAttrDescriptor() {
    }
}
