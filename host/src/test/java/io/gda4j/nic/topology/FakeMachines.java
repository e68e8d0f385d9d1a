package io.gda4j.nic.topology;

import java.nio.file.Path;
import java.util.List;

/** The four machines of issue 8, as sysfs trees. */
public final class FakeMachines {
    private FakeMachines() {
    }

    /** GPU bus ids of {@link #eightGpuBox}, GPU0..GPU7. */
    public static final List<String> EIGHT_GPUS = List.of("0000:1a:00.0", "0000:1b:00.0", "0000:3a:00.0",
            "0000:3b:00.0", "0000:9a:00.0", "0000:9b:00.0", "0000:ba:00.0", "0000:bb:00.0");

    /**
     * An 8-GPU/8-NIC box (DGX-like): four leaf PCIe switches, each with two GPUs and two single-port NICs
     * (mlx5_0..mlx5_7, two per switch in GPU order), paired under one top switch per CPU socket.
     * <pre>
     * pci0000:00 (NUMA 0) - 00:01.0 - top switch 10:00.0 -+- leaf 18: GPU0 1a, GPU1 1b, mlx5_0 1c, mlx5_1 1d
     *                                                      +- leaf 38: GPU2 3a, GPU3 3b, mlx5_2 3c, mlx5_3 3d
     * pci0000:80 (NUMA 1) - 80:01.0 - top switch 90:00.0 -+- leaf 98: GPU4 9a, GPU5 9b, mlx5_4 9c, mlx5_5 9d
     *                                                      +- leaf b8: GPU6 ba, GPU7 bb, mlx5_6 bc, mlx5_7 bd
     * </pre>
     */
    public static FakeSysfs eightGpuBox(Path dir) {
        FakeSysfs sys = new FakeSysfs(dir);
        int nic = 0;
        String[][] sockets = {{"pci0000:00", "0000:00:01.0", "10", "18", "38"}, {"pci0000:80", "0000:80:01.0", "90",
                "98", "b8"}};
        for (int s = 0; s < sockets.length; s++) {
            String[] k = sockets[s];
            FakeSysfs.Node[] top = sys.hostBridge(k[0], s).bridge(k[1]).pcieSwitch("0000:" + k[2] + ":00.0",
                    "0000:" + hex(k[2], 1) + ":00.0", "0000:" + hex(k[2], 1) + ":01.0");
            for (int leaf = 0; leaf < 2; leaf++) {
                String bus = k[3 + leaf];
                String below = hex(bus, 1);
                String[] ports = new String[4];
                for (int p = 0; p < 4; p++) {
                    ports[p] = "0000:" + below + ":0" + p + ".0";
                }
                FakeSysfs.Node[] down = top[leaf].pcieSwitch("0000:" + bus + ":00.0", ports);
                String bus0 = hex(bus, 2);
                down[0].gpu("0000:" + bus0 + ":00.0");
                down[1].gpu("0000:" + hex(bus, 3) + ":00.0");
                down[2].nic("0000:" + hex(bus, 4) + ":00.0", "mlx5_" + nic++, 1);
                down[3].nic("0000:" + hex(bus, 5) + ":00.0", "mlx5_" + nic++, 1);
            }
        }
        return sys;
    }

    /** GPU bus ids of {@link #twoSocketServer}. */
    public static final List<String> TWO_SOCKET_GPUS = List.of("0000:01:00.0", "0000:81:00.0");

    /**
     * A two-socket PCIe server without switches: every device on a root port of its own. Socket 0 has two host
     * bridges (GPU0 under pci0000:00, mlx5_0 under pci0000:20); socket 1 one (GPU1 and mlx5_1 under pci0000:80).
     * GPU0-mlx5_0 is NODE, GPU1-mlx5_1 PHB, the rest SYS: nothing within PXB.
     */
    public static FakeSysfs twoSocketServer(Path dir) {
        FakeSysfs sys = new FakeSysfs(dir);
        sys.hostBridge("pci0000:00", 0).bridge("0000:00:01.0").gpu("0000:01:00.0");
        sys.hostBridge("pci0000:20", 0).bridge("0000:20:01.0").nic("0000:21:00.0", "mlx5_0", 1);
        FakeSysfs.Node socket1 = sys.hostBridge("pci0000:80", 1);
        socket1.bridge("0000:80:01.0").gpu("0000:81:00.0");
        socket1.bridge("0000:80:03.0").nic("0000:83:00.0", "mlx5_1", 1);
        return sys;
    }

    /** GPU bus ids of {@link #noNicBox} and {@link #dualPortNicBox}. */
    public static final List<String> TWO_GPUS = List.of("0000:19:00.0", "0000:1a:00.0");

    /** Two GPUs behind one switch, and no RDMA device at all (every machine of this workplace). */
    public static FakeSysfs noNicBox(Path dir) {
        FakeSysfs sys = new FakeSysfs(dir);
        FakeSysfs.Node[] down = sys.hostBridge("pci0000:17", 0).bridge("0000:17:01.0")
                .pcieSwitch("0000:18:00.0", "0000:18:08.0", "0000:18:10.0");
        down[0].gpu("0000:19:00.0");
        down[1].gpu("0000:1a:00.0");
        return sys;
    }

    /** Two GPUs and one NIC with two ports (mlx5_0 ports 1 and 2), all behind one switch. */
    public static FakeSysfs dualPortNicBox(Path dir) {
        FakeSysfs sys = new FakeSysfs(dir);
        FakeSysfs.Node[] down = sys.hostBridge("pci0000:17", 0).bridge("0000:17:01.0")
                .pcieSwitch("0000:18:00.0", "0000:18:08.0", "0000:18:10.0", "0000:18:18.0");
        down[0].gpu("0000:19:00.0");
        down[1].gpu("0000:1a:00.0");
        down[2].nic("0000:1b:00.0", "mlx5_0", 1, 2);
        return sys;
    }

    private static String hex(String bus, int plus) {
        return String.format("%02x", Integer.parseInt(bus, 16) + plus);
    }
}
