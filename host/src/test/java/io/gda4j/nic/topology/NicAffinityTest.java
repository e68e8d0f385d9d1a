package io.gda4j.nic.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.nic.NicException;
import io.gda4j.nic.NicOptions;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Each local rank's NIC port on the four machines of issue 8, and the refusals and their messages. */
@Timeout(10)
class NicAffinityTest {
    @TempDir
    Path dir;

    static NicAffinity affinity(FakeSysfs sys, String devices, String gdrLevel) {
        return new NicAffinity(sys.read(), NicPlacement.parse(devices, gdrLevel));
    }

    /** The port label each GPU of {@code gpus} gets as local rank i of all of them. */
    static List<String> choices(NicAffinity a, List<String> gpus) {
        List<String> labels = new ArrayList<>();
        for (int i = 0; i < gpus.size(); i++) {
            labels.add(a.choose(i, gpus.size(), gpus.get(i)).label());
        }
        return labels;
    }

    @Test
    void eightGpuBoxGivesEachGpuTheNicOnItsSwitchAndSpreadsThePair() {
        NicAffinity a = affinity(FakeMachines.eightGpuBox(dir), "", "PXB");
        assertEquals(List.of("mlx5_0 port 1 (PIX)", "mlx5_1 port 1 (PIX)", "mlx5_2 port 1 (PIX)",
                "mlx5_3 port 1 (PIX)", "mlx5_4 port 1 (PIX)", "mlx5_5 port 1 (PIX)", "mlx5_6 port 1 (PIX)",
                "mlx5_7 port 1 (PIX)"), choices(a, FakeMachines.EIGHT_GPUS));
        NicAssignment gpu1 = a.choose(1, 8, "00000000:1B:00.0");
        assertEquals(new NicOptions("mlx5_1", 1, 0), gpu1.options());
        assertEquals("closest to GPU 0000:1b:00.0: PIX (at most one PCIe switch); round-robin over 2 equally close"
                + " ports among the 2 GPU(s) that share them (this one is #2 by bus id)", gpu1.reason());
    }

    @Test
    void theTurnDependsOnTheGpuNotOnWhichRanksThisProcessDrives() {
        NicAffinity a = affinity(FakeMachines.eightGpuBox(dir), "", "PXB");
        assertEquals("mlx5_5 port 1 (PIX)", a.choose(0, 1, FakeMachines.EIGHT_GPUS.get(5)).label(),
                "GPU5 alone in its process still takes the second NIC of its switch");
    }

    @Test
    void twoSocketServerIsRefusedByDefaultWithBothSettingsNamed() {
        NicAffinity a = affinity(FakeMachines.twoSocketServer(dir), "", "PXB");
        NicException e = assertThrows(NicException.class, () -> a.choose(1, 2, "0000:81:00.0"));
        assertEquals("GPU 0000:81:00.0 (local rank 1) and mlx5_1 port 1 are PHB apart (through the CPU's PCIe host"
                + " bridge), farther than GDA4J_NIC_GDR_LEVEL=PXB (several PCIe switches, not the host bridge)"
                + " allows: GPUDirect RDMA over that path is refused by the platform or slow. It is the closest RDMA"
                + " port to this GPU. Name a NIC behind the GPU's PCIe switch with GDA4J_NIC_DEVICE"
                + " (-Dgda4j.nic.device; one for all local ranks or one per local rank, comma-separated; 'gda4j info'"
                + " prints the GPU x NIC matrix), or accept the path with GDA4J_NIC_GDR_LEVEL=PHB"
                + " (-Dgda4j.nic.gdrLevel=PHB)", e.getMessage());
        NicException node = assertThrows(NicException.class, () -> a.choose(0, 2, "0000:01:00.0"));
        assertTrue(node.getMessage().contains("mlx5_0 port 1 are NODE apart")
                && node.getMessage().contains("GDA4J_NIC_GDR_LEVEL=NODE"), node.getMessage());
    }

    @Test
    void twoSocketServerWithTheOverrideTakesEachSocketsNic() {
        FakeSysfs sys = FakeMachines.twoSocketServer(dir);
        NicAffinity phb = affinity(sys, "", "phb");
        assertEquals("mlx5_1 port 1 (PHB)", phb.choose(1, 2, "0000:81:00.0").label());
        assertThrows(NicException.class, () -> phb.choose(0, 2, "0000:01:00.0"), "NODE is beyond PHB");
        NicAffinity node = affinity(sys, "", "NODE");
        assertEquals(List.of("mlx5_0 port 1 (NODE)", "mlx5_1 port 1 (PHB)"),
                choices(node, FakeMachines.TWO_SOCKET_GPUS), "the same socket beats the other socket's");
    }

    @Test
    void aNamedDeviceAcrossSocketsIsRefusedUnlessTheLevelAllowsIt() {
        FakeSysfs sys = FakeMachines.twoSocketServer(dir);
        NicException e = assertThrows(NicException.class,
                () -> affinity(sys, "mlx5_0", "NODE").choose(1, 2, "0000:81:00.0"));
        assertTrue(e.getMessage().startsWith("GPU 0000:81:00.0 (local rank 1) and mlx5_0 port 1 are SYS apart"),
                e.getMessage());
        assertFalse(e.getMessage().contains("closest"), "a named device is not called the closest");
        assertTrue(e.getMessage().contains("GDA4J_NIC_DEVICE") && e.getMessage().contains("GDA4J_NIC_GDR_LEVEL=SYS"),
                e.getMessage());
        NicAssignment sysOk = affinity(sys, "mlx5_0", "SYS").choose(1, 2, "0000:81:00.0");
        assertEquals("mlx5_0 port 1 (SYS)", sysOk.label());
        assertTrue(sysOk.reason().startsWith("named by GDA4J_NIC_DEVICE"), sysOk.reason());
    }

    @Test
    void aBoxWithoutNicsOpensTheFirstDeviceAsBefore() {
        NicAffinity a = affinity(FakeMachines.noNicBox(dir), "", "PXB");
        NicAssignment gpu0 = a.choose(0, 2, "0000:19:00.0");
        assertNull(gpu0.port());
        assertEquals(NicOptions.defaults(), gpu0.options());
        assertTrue(gpu0.reason().startsWith("sysfs lists no RDMA device under "), gpu0.reason());
        NicAssignment named = affinity(FakeMachines.noNicBox(dir.resolve("again")), "mlx5_2", "PXB")
                .choose(1, 2, "0000:1a:00.0");
        assertEquals(new NicOptions("mlx5_2", 1, 0), named.options(), "unknown to sysfs: left to libibverbs");
    }

    @Test
    void aDualPortNicSpreadsGpusOverItsPorts() {
        FakeSysfs sys = FakeMachines.dualPortNicBox(dir);
        assertEquals(List.of("mlx5_0 port 1 (PIX)", "mlx5_0 port 2 (PIX)"),
                choices(affinity(sys, "", "PXB"), FakeMachines.TWO_GPUS));
        sys.port("mlx5_0", 2, "InfiniBand", "1: DOWN");
        assertEquals(List.of("mlx5_0 port 1 (PIX)", "mlx5_0 port 1 (PIX)"),
                choices(affinity(sys, "", "PXB"), FakeMachines.TWO_GPUS), "a port that is down is not chosen");
        sys.port("mlx5_0", 1, "InfiniBand", "1: DOWN");
        NicException e = assertThrows(NicException.class,
                () -> affinity(sys, "", "PXB").choose(0, 2, "0000:19:00.0"));
        assertTrue(e.getMessage().startsWith("no RDMA port is ACTIVE (mlx5_0 port 1: 1: DOWN, mlx5_0 port 2: 1:"
                + " DOWN)"), e.getMessage());
    }

    @Test
    void aNamedPortIsTakenAndAMissingOneIsRefused() {
        FakeSysfs sys = FakeMachines.dualPortNicBox(dir);
        assertEquals(List.of("mlx5_0 port 2 (PIX)", "mlx5_0 port 2 (PIX)"),
                choices(affinity(sys, "mlx5_0:2", "PXB"), FakeMachines.TWO_GPUS));
        NicException e = assertThrows(NicException.class,
                () -> affinity(sys, "mlx5_0:3", "PXB").choose(0, 2, "0000:19:00.0"));
        assertEquals("GDA4J_NIC_DEVICE names mlx5_0:3 for local rank 0, but mlx5_0 has ports 1, 2", e.getMessage());
    }

    @Test
    void oneNamedDeviceServesEveryRankAndAListOnePerLocalRank() {
        FakeSysfs sys = FakeMachines.eightGpuBox(dir);
        assertEquals(List.of("mlx5_3 port 1 (PXB)", "mlx5_3 port 1 (PXB)"),
                choices(affinity(sys, "mlx5_3", "PXB"), FakeMachines.EIGHT_GPUS.subList(0, 2)));
        assertEquals(List.of("mlx5_1 port 1 (PIX)", "mlx5_0 port 1 (PIX)", "mlx5_3 port 1 (PIX)"),
                choices(affinity(sys, "mlx5_1, mlx5_0,mlx5_3", "PXB"), FakeMachines.EIGHT_GPUS.subList(0, 3)));
    }

    @Test
    void aListOfTheWrongLengthOrAnUnknownDeviceIsRefused() {
        FakeSysfs sys = FakeMachines.eightGpuBox(dir);
        NicException count = assertThrows(NicException.class,
                () -> affinity(sys, "mlx5_0,mlx5_1,mlx5_2", "PXB").choose(0, 8, FakeMachines.EIGHT_GPUS.get(0)));
        assertEquals("GDA4J_NIC_DEVICE names 3 devices (mlx5_0,mlx5_1,mlx5_2) but this process drives 8 local ranks:"
                + " name one device for every rank, or one per local rank in local-rank order", count.getMessage());
        NicException unknown = assertThrows(NicException.class,
                () -> affinity(sys, "mlx5_9", "PXB").choose(0, 8, FakeMachines.EIGHT_GPUS.get(0)));
        assertEquals("GDA4J_NIC_DEVICE names mlx5_9 for local rank 0, which is not an RDMA device here: "
                + sys.root().resolve("class/infiniband") + " lists mlx5_0, mlx5_1, mlx5_2, mlx5_3, mlx5_4, mlx5_5,"
                + " mlx5_6, mlx5_7 (ibv_devices shows the same)", unknown.getMessage());
    }

    @Test
    void aGpuSysfsDoesNotShowGetsTheFirstActivePort() {
        NicAssignment a = affinity(FakeMachines.dualPortNicBox(dir), "", "PXB").choose(0, 1, "0000:99:00.0");
        assertEquals("mlx5_0 port 1", a.label());
        assertNull(a.path());
        assertTrue(a.reason().contains("distances are unknown"), a.reason());
    }

    @Test
    void reportPrintsTheMatrixTheDevicesTheLegendAndEachChoice() {
        FakeSysfs sys = FakeMachines.twoSocketServer(dir);
        List<String> lines = affinity(sys, "", "PHB").report(FakeMachines.TWO_SOCKET_GPUS);
        assertEquals("          NIC0  NIC1", lines.get(0));
        assertEquals("GPU0      NODE   SYS", lines.get(1));
        assertEquals("GPU1       SYS   PHB", lines.get(2));
        assertTrue(lines.contains("GPU0    0000:01:00.0  NUMA 0"), lines.toString());
        assertTrue(lines.contains("NIC1    0000:83:00.0  mlx5_1  NUMA 1  port 1 InfiniBand ACTIVE"), lines.toString());
        assertTrue(lines.contains("PHB  = through the CPU's PCIe host bridge"), lines.toString());
        assertTrue(lines.get(lines.size() - 2).startsWith("GPU0 -> refused: GPU 0000:01:00.0 (local rank 0) and"
                + " mlx5_0 port 1 are NODE apart"), lines.toString());
        assertTrue(lines.get(lines.size() - 1).startsWith("GPU1 -> mlx5_1 port 1 (PHB): closest to GPU"),
                lines.toString());
    }

    @Test
    void reportSaysNoRdmaNicInOneLine() {
        FakeSysfs sys = FakeMachines.noNicBox(dir);
        assertEquals(List.of("no RDMA NIC: sysfs lists none under " + sys.root().resolve("class/infiniband")),
                affinity(sys, "", "PXB").report(FakeMachines.TWO_GPUS));
    }
}
