package io.gda4j.nic.topology;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The two settings that steer {@link NicAffinity}: which RDMA device (and port) each local rank uses, and how far
 * from its GPU a NIC may be. Resolved with the other IBGDA settings ({@code IbgdaConfig}) and printed by
 * {@code gda4j info}.
 *
 * @param devices  empty: choose by PCIe distance; one entry: every local rank uses it; otherwise one per local
 *                 rank, in local-rank order
 * @param gdrLevel the farthest path GPUDirect RDMA is allowed over (NCCL's {@code NCCL_NET_GDR_LEVEL})
 */
public record NicPlacement(List<NamedPort> devices, PathType gdrLevel) {
    public static final String NIC_DEVICE_PROP_NAME = "gda4j.nic.device";
    public static final String NIC_DEVICE_ENV = "GDA4J_NIC_DEVICE";
    public static final String NIC_DEVICE_DEFAULT = "";

    public static final String GDR_LEVEL_PROP_NAME = "gda4j.nic.gdrLevel";
    public static final String GDR_LEVEL_ENV = "GDA4J_NIC_GDR_LEVEL";
    /** NCCL's default too: within the GPU's PCIe switch hierarchy, never through the CPU. */
    public static final String GDR_LEVEL_DEFAULT = "PXB";

    /**
     * A device the user named, e.g. {@code mlx5_3} or {@code mlx5_3:2}.
     *
     * @param device the RDMA device
     * @param port   the port, from 1; {@link #FIRST_ACTIVE_PORT} when not named
     */
    public record NamedPort(String device, int port) {
        /** {@link #port()} when the name has no {@code :port}: the device's first active port. */
        public static final int FIRST_ACTIVE_PORT = 0;

        @Override
        public String toString() {
            return port == FIRST_ACTIVE_PORT ? device : device + ":" + port;
        }
    }

    public NicPlacement {
        devices = List.copyOf(devices);
    }

    /** The defaults: choose by distance, GPUDirect up to {@value #GDR_LEVEL_DEFAULT}. */
    public static NicPlacement defaults() {
        return parse(NIC_DEVICE_DEFAULT, GDR_LEVEL_DEFAULT);
    }

    /**
     * Parses {@code devicesText} (empty, or a comma list of {@code device[:port]}) and {@code gdrLevelText}
     * ({@code PIX|PXB|PHB|NODE|SYS}); throws IllegalArgumentException naming the setting.
     */
    public static NicPlacement parse(String devicesText, String gdrLevelText) {
        List<NamedPort> devices = new ArrayList<>();
        if (!devicesText.isBlank()) {
            for (String item : devicesText.split(",", -1)) {
                devices.add(parseDevice(item.strip(), devicesText));
            }
        }
        return new NicPlacement(devices, PathType.parse(gdrLevelText, GDR_LEVEL_ENV + "/" + GDR_LEVEL_PROP_NAME));
    }

    private static NamedPort parseDevice(String item, String whole) {
        String device = item;
        int port = NamedPort.FIRST_ACTIVE_PORT;
        int colon = item.lastIndexOf(':');
        if (colon >= 0) {
            device = item.substring(0, colon).strip();
            try {
                port = Integer.parseInt(item.substring(colon + 1).strip());
            } catch (NumberFormatException e) {
                port = -1;
            }
        }
        if (device.isEmpty() || port < 0 || (colon >= 0 && port == 0)) {
            throw new IllegalArgumentException(NIC_DEVICE_ENV + "/" + NIC_DEVICE_PROP_NAME + " must be an RDMA device"
                    + " (e.g. mlx5_0, or mlx5_0:2 for its port 2) or a comma list of them, one per local rank, not '"
                    + whole + "'");
        }
        return new NamedPort(device, port);
    }

    /** {@code devices} as the user would type them, or "auto (closest to each GPU)". */
    public String devicesText() {
        return devices.isEmpty() ? "auto (closest to each GPU)"
                : devices.stream().map(NamedPort::toString).collect(Collectors.joining(","));
    }

    /** One line per setting with where to change it, for {@code gda4j info}. */
    public String describe() {
        return String.format("nic device  %s  (%s / -D%s; one for all local ranks or one per local rank)%n",
                devicesText(), NIC_DEVICE_ENV, NIC_DEVICE_PROP_NAME)
                + String.format("gdr level   %s  (%s / -D%s; the farthest GPU-NIC path GPUDirect RDMA may take)%n",
                gdrLevel, GDR_LEVEL_ENV, GDR_LEVEL_PROP_NAME);
    }
}
