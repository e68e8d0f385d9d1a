package io.gda4j.verbs;

/**
 * An RDMA device as {@code ibv_get_device_list} reports it.
 *
 * @param name     kernel device name, e.g. {@code mlx5_0}
 * @param nodeGuid node GUID in host order (as {@code ibv_devinfo} prints it)
 */
public record RdmaDevice(String name, long nodeGuid) {
    /** The GUID as {@code ibv_devinfo} prints it: {@code 0002:c903:0000:1234} style. */
    public String nodeGuidText() {
        String hex = String.format("%016x", nodeGuid);
        return hex.substring(0, 4) + ":" + hex.substring(4, 8) + ":" + hex.substring(8, 12) + ":" + hex.substring(12);
    }
}
