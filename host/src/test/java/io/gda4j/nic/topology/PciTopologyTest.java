package io.gda4j.nic.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Reading fake sysfs trees, and the PIX/PXB/PHB/NODE/SYS classification of nvidia-smi topo -m. */
@Timeout(10)
class PciTopologyTest {
    @TempDir
    Path dir;

    @Test
    void readsFunctionsThroughTheirLinksWithEveryBridgeAbove() {
        PciTopology t = FakeMachines.eightGpuBox(dir).read();
        assertEquals(FakeMachines.EIGHT_GPUS, t.gpus().stream().map(PciDevice::busId).toList());
        assertEquals(List.of("mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7"),
                t.nics().stream().map(PciNic::name).toList());
        PciDevice gpu0 = t.device("00000000:1A:00.0").orElseThrow();
        assertEquals("pci0000:00", gpu0.hostBridge());
        assertEquals(List.of("0000:00:01.0", "0000:10:00.0", "0000:11:00.0", "0000:18:00.0", "0000:19:00.0"),
                gpu0.bridges());
        assertEquals(0, gpu0.numaNode());
        assertEquals(FakeSysfs.CLASS_3D, gpu0.classCode());
        PciNic nic7 = t.nic("mlx5_7").orElseThrow();
        assertEquals("0000:bd:00.0", nic7.device().busId());
        assertEquals(1, nic7.device().numaNode());
        assertEquals(List.of(new NicPort("mlx5_7", 1, "InfiniBand", "4: ACTIVE")), nic7.ports());
        assertEquals(List.of(), t.problems());
    }

    @Test
    void eightGpuBoxMatrix() {
        PciTopology t = FakeMachines.eightGpuBox(dir).read();
        List<String> rows = matrix(t, FakeMachines.EIGHT_GPUS);
        assertEquals(List.of(
                "PIX PIX PXB PXB SYS SYS SYS SYS",
                "PIX PIX PXB PXB SYS SYS SYS SYS",
                "PXB PXB PIX PIX SYS SYS SYS SYS",
                "PXB PXB PIX PIX SYS SYS SYS SYS",
                "SYS SYS SYS SYS PIX PIX PXB PXB",
                "SYS SYS SYS SYS PIX PIX PXB PXB",
                "SYS SYS SYS SYS PXB PXB PIX PIX",
                "SYS SYS SYS SYS PXB PXB PIX PIX"), rows);
    }

    @Test
    void twoSocketServerMatrix() {
        PciTopology t = FakeMachines.twoSocketServer(dir).read();
        assertEquals(List.of("NODE SYS", "SYS PHB"), matrix(t, FakeMachines.TWO_SOCKET_GPUS));
    }

    @Test
    void aBoxWithoutNicsHasGpusAndNoNics() {
        PciTopology t = FakeMachines.noNicBox(dir).read();
        assertEquals(FakeMachines.TWO_GPUS, t.gpus().stream().map(PciDevice::busId).toList());
        assertEquals(List.of(), t.nics());
        assertEquals(PathType.PIX, t.device("0000:19:00.0").orElseThrow()
                .pathTo(t.device("0000:1a:00.0").orElseThrow()));
    }

    @Test
    void aDualPortNicListsBothPorts() {
        PciTopology t = FakeMachines.dualPortNicBox(dir).read();
        assertEquals(List.of(1, 2), t.nic("mlx5_0").orElseThrow().ports().stream().map(NicPort::number).toList());
        assertEquals(List.of("PIX", "PIX"), matrix(t, FakeMachines.TWO_GPUS));
    }

    @Test
    void aSoftwareRdmaDeviceIsLeftOutAndSaidSo() throws IOException {
        FakeSysfs sys = FakeMachines.noNicBox(dir);
        Files.createDirectories(dir.resolve("class/infiniband/rxe0/ports/1"));
        PciTopology t = sys.read();
        assertEquals(List.of(), t.nics());
        assertTrue(t.problems().get(0).startsWith("rxe0 is not a PCI function"), t.problems().toString());
    }

    @Test
    void aMissingTreeIsEmptyAndSaysWhy() {
        PciTopology t = PciTopology.read(dir.resolve("nothing"));
        assertEquals(List.of(), t.gpus());
        assertEquals(List.of(), t.nics());
        assertTrue(t.problems().get(0).contains("PCI distances are unknown"), t.problems().toString());
    }

    @Test
    void busIdsAreSpelledAsSysfsSpellsThem() {
        assertEquals("0000:1b:00.0", PciTopology.normalizeBusId("00000000:1B:00.0"));
        assertEquals("0000:1b:00.0", PciTopology.normalizeBusId("0000:1B:00.0 "));
        assertEquals("0000:1b:00.0", PciTopology.normalizeBusId("1b:00.0"));
        assertEquals("0001:1b:00.1", PciTopology.normalizeBusId("00000001:1b:00.1"));
    }

    @Test
    void pathRulesOnHandMadeDevices() {
        PciDevice gpu = device("pci0000:00", 0, "0000:00:01.0", "0000:01:00.0", "0000:02:00.0");
        assertEquals(PathType.PIX, gpu.pathTo(device("pci0000:00", 0, "0000:00:01.0", "0000:01:00.0",
                "0000:02:08.0")), "sibling downstream ports of one switch");
        assertEquals(PathType.PIX, gpu.pathTo(device("pci0000:00", 0, "0000:00:01.0", "0000:01:00.0",
                "0000:02:00.0")), "under the same downstream port");
        assertEquals(PathType.PXB, gpu.pathTo(device("pci0000:00", 0, "0000:00:01.0", "0000:01:00.0",
                "0000:02:08.0", "0000:05:00.0", "0000:06:00.0")), "a switch behind a switch");
        assertEquals(PathType.PXB, gpu.pathTo(device("pci0000:00", 0, "0000:00:01.0")), "on the root port above");
        assertEquals(PathType.PHB, gpu.pathTo(device("pci0000:00", 0, "0000:00:02.0")), "another root port");
        assertEquals(PathType.NODE, gpu.pathTo(device("pci0000:20", 0, "0000:20:01.0")));
        assertEquals(PathType.SYS, gpu.pathTo(device("pci0000:80", 1, "0000:80:01.0")));
        assertEquals(PathType.NODE, device("pci0000:00", -1).pathTo(device("pci0000:20", -1)),
                "NUMA unknown on both sides: one node (single-socket machines say -1)");
        assertEquals(PathType.SYS, device("pci0000:00", -1).pathTo(device("pci0000:20", 0)));
    }

    private static PciDevice device(String hostBridge, int numa, String... bridges) {
        return new PciDevice("0000:ff:00.0", hostBridge, List.of(bridges), numa, FakeSysfs.CLASS_INFINIBAND,
                FakeSysfs.VENDOR_MELLANOX);
    }

    /** One row per GPU: its path to each NIC, separated by spaces. */
    static List<String> matrix(PciTopology t, List<String> gpus) {
        return gpus.stream().map(g -> t.nics().stream()
                .map(n -> t.device(g).orElseThrow().pathTo(n.device()).name())
                .collect(Collectors.joining(" "))).toList();
    }
}
