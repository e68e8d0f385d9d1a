package io.gda4j.nic;

/**
 * Choices a {@link NicProvider} opens a NIC with; the emulated NIC ignores the RDMA ones.
 *
 * @param deviceName RDMA device to open (e.g. {@code mlx5_0}); null or empty for the first one listed
 * @param portNum    port, from 1
 * @param gidIndex   GID index (RoCE)
 */
public record NicOptions(String deviceName, int portNum, int gidIndex) {
    public static NicOptions defaults() {
        return new NicOptions(null, 1, 0);
    }
}
