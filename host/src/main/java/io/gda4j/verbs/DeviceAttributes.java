package io.gda4j.verbs;

import com.sun.jna.Pointer;

import java.nio.charset.StandardCharsets;

/**
 * The parts of {@code struct ibv_device_attr} gda4j uses ({@link RdmaContext#queryDevice()}).
 *
 * @param firmwareVersion      fw_ver
 * @param nodeGuid             node_guid, host order
 * @param systemImageGuid      sys_image_guid, host order
 * @param maxMrSize            largest registrable region, bytes
 * @param pageSizeCap          supported page sizes, a bit per size
 * @param vendorId             vendor_id (0x02c9 for Mellanox/NVIDIA)
 * @param vendorPartId         vendor_part_id
 * @param hardwareVersion      hw_ver
 * @param maxQp                max_qp
 * @param maxQpWr              max_qp_wr: the deepest queue
 * @param deviceCapFlags       device_cap_flags ({@code IBV_DEVICE_*})
 * @param maxSge               max_sge
 * @param maxCq                max_cq
 * @param maxCqe               max_cqe
 * @param maxMr                max_mr
 * @param maxPd                max_pd
 * @param maxQpRdAtom          max_qp_rd_atom: bound for a QP's max_dest_rd_atomic
 * @param maxQpInitRdAtom      max_qp_init_rd_atom: bound for a QP's max_rd_atomic
 * @param atomicCap            atomic_cap ({@code IBV_ATOMIC_NONE/HCA/GLOB})
 * @param physPortCount        phys_port_cnt; ports are numbered from 1
 */
public record DeviceAttributes(String firmwareVersion, long nodeGuid, long systemImageGuid, long maxMrSize,
                               long pageSizeCap, int vendorId, int vendorPartId, int hardwareVersion, int maxQp,
                               int maxQpWr, int deviceCapFlags, int maxSge, int maxCq, int maxCqe, int maxMr,
                               int maxPd, int maxQpRdAtom, int maxQpInitRdAtom, int atomicCap, int physPortCount) {

    /** Reads a filled {@code struct ibv_device_attr}. */
    static DeviceAttributes read(Pointer attr) {
        byte[] firmware = attr.getByteArray(IbvDeviceAttrDescriptor.FW_VER_OFFSET,
                IbvDeviceAttrDescriptor.FW_VER_LENGTH);
        int length = 0;
        while (length < firmware.length && firmware[length] != 0) {
            length++;
        }
        return new DeviceAttributes(new String(firmware, 0, length, StandardCharsets.US_ASCII),
                NetworkOrder.be64ToHost(attr.getLong(IbvDeviceAttrDescriptor.NODE_GUID_OFFSET)),
                NetworkOrder.be64ToHost(attr.getLong(IbvDeviceAttrDescriptor.SYS_IMAGE_GUID_OFFSET)),
                attr.getLong(IbvDeviceAttrDescriptor.MAX_MR_SIZE_OFFSET),
                attr.getLong(IbvDeviceAttrDescriptor.PAGE_SIZE_CAP_OFFSET),
                attr.getInt(IbvDeviceAttrDescriptor.VENDOR_ID_OFFSET),
                attr.getInt(IbvDeviceAttrDescriptor.VENDOR_PART_ID_OFFSET),
                attr.getInt(IbvDeviceAttrDescriptor.HW_VER_OFFSET),
                attr.getInt(IbvDeviceAttrDescriptor.MAX_QP_OFFSET),
                attr.getInt(IbvDeviceAttrDescriptor.MAX_QP_WR_OFFSET),
                attr.getInt(IbvDeviceAttrDescriptor.DEVICE_CAP_FLAGS_OFFSET),
                attr.getInt(IbvDeviceAttrDescriptor.MAX_SGE_OFFSET),
                attr.getInt(IbvDeviceAttrDescriptor.MAX_CQ_OFFSET),
                attr.getInt(IbvDeviceAttrDescriptor.MAX_CQE_OFFSET),
                attr.getInt(IbvDeviceAttrDescriptor.MAX_MR_OFFSET),
                attr.getInt(IbvDeviceAttrDescriptor.MAX_PD_OFFSET),
                attr.getInt(IbvDeviceAttrDescriptor.MAX_QP_RD_ATOM_OFFSET),
                attr.getInt(IbvDeviceAttrDescriptor.MAX_QP_INIT_RD_ATOM_OFFSET),
                attr.getInt(IbvDeviceAttrDescriptor.ATOMIC_CAP_OFFSET),
                Byte.toUnsignedInt(attr.getByte(IbvDeviceAttrDescriptor.PHYS_PORT_CNT_OFFSET)));
    }
}
