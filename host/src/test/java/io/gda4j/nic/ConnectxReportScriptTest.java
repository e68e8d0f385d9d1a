package io.gda4j.nic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code samples/scripts/connectx-report.sh} on a machine without a ConnectX (every machine here): it refuses at
 * once, names each missing piece, and runs nothing (no build, no test, no report file); its machine section
 * ({@code --facts}), read from a fake sysfs tree, records the IOMMU mode, ACS on the GPU-NIC path, the path itself,
 * the NIC's firmware, ports, GIDs, MTU and ECN; and each fault a first ConnectX run most likely meets maps to its
 * cause and its check ({@code --explain}, the words the report's table uses). Each run has a time limit.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ConnectxReportScriptTest {
    static final long RUN_LIMIT_SECONDS = 60;
    static Path script;

    @TempDir
    Path workDir;

    record Result(int exitCode, String output) {
    }

    @BeforeAll
    static void findScript() {
        for (Path candidate : List.of(Path.of("../samples/scripts/connectx-report.sh"),
                Path.of("samples/scripts/connectx-report.sh"))) {
            if (Files.isRegularFile(candidate)) {
                script = candidate.toAbsolutePath().normalize();
            }
        }
        assertNotNull(script, "samples/scripts/connectx-report.sh not found from " + Path.of("").toAbsolutePath());
        assumeTrue(onPath("bash") != null, "no bash on PATH");
    }

    /** The first executable named {@code tool} on this process's PATH, or null. */
    static Path onPath(String tool) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, tool);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }

    Result run(Map<String, String> environment, boolean clearEnvironment, String... args)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(onPath("bash").toString(), script.toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true);
        Path log = Files.createTempFile("connectx-report", ".log");
        pb.redirectOutput(log.toFile());
        if (clearEnvironment) {
            pb.environment().clear();
        }
        pb.environment().putAll(environment);
        Process p = pb.start();
        try {
            if (!p.waitFor(RUN_LIMIT_SECONDS, TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                throw new AssertionError("connectx-report.sh ran past " + RUN_LIMIT_SECONDS + " s; a machine without"
                        + " the pieces must be refused at once: " + Files.readString(log));
            }
            return new Result(p.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(log);
        }
    }

    static boolean hasMlx5Device() throws IOException {
        Path ib = Path.of("/sys/class/infiniband");
        if (!Files.isDirectory(ib)) {
            return false;
        }
        try (DirectoryStream<Path> devices = Files.newDirectoryStream(ib, "mlx5_*")) {
            return devices.iterator().hasNext();
        }
    }

    static boolean hasGpu() {
        return Files.exists(Path.of("/dev/nvidia0")) || onPath("nvidia-smi") != null;
    }

    void assertNothingRan(Result r) throws IOException {
        assertFalse(r.output().contains("connectx-report: running"), r.output());
        try (DirectoryStream<Path> left = Files.newDirectoryStream(workDir)) {
            assertFalse(left.iterator().hasNext(), "the refused run left files in its working directory");
        }
    }

    @Test
    void refusesOnThisMachineNamingTheMissingNicAndGpu() throws Exception {
        boolean mlx5 = hasMlx5Device();
        boolean gpu = hasGpu();
        assumeFalse(mlx5 && gpu, "this machine has an mlx5 device and a GPU: the script would run the checks");
        Result r = run(Map.of(), false);
        assertEquals(2, r.exitCode(), r.output());
        assertTrue(r.output().contains("connectx-report: this machine cannot run the ConnectX checks; missing:"),
                r.output());
        if (!mlx5) {
            assertTrue(r.output().contains("  - no mlx5 device in /sys/class/infiniband"), r.output());
        }
        if (!gpu) {
            assertTrue(r.output().contains("  - no GPU: nvidia-smi lists no NVIDIA GPU and /dev/nvidia0 does not"
                    + " exist"), r.output());
        }
        if (!Files.exists(Path.of("/sys/module/nvidia_peermem"))
                && !Files.exists(Path.of("/proc/driver/nvidia/version"))) {
            assertTrue(r.output().contains("  - no nvidia_peermem/dma-buf: nvidia_peermem is not loaded"), r.output());
        }
        assertTrue(r.output().contains("Nothing was run. docs/CONNECTX.md"), r.output());
        assertNothingRan(r);
    }

    @Test
    void refusesWithoutJavaAndMavenNamingThem() throws Exception {
        // A PATH holding only the tools the machine check uses: no java, no mvn, no nvidia-smi, no ldconfig.
        Path bin = Files.createDirectory(workDir.resolve("bin"));
        for (String tool : List.of("bash", "dirname", "uname", "grep", "sed", "head")) {
            Path real = onPath(tool);
            assumeTrue(real != null, "no " + tool + " on PATH");
            Files.createSymbolicLink(bin.resolve(tool), real.toRealPath());
        }
        Path run = Files.createDirectory(workDir.resolve("run"));
        workDir = run;
        Result r = run(Map.of("PATH", bin.toString(), "HOME", System.getProperty("java.io.tmpdir")), true);
        assertEquals(2, r.exitCode(), r.output());
        assertTrue(r.output().contains("  - no java: none on PATH (and JAVA unset); install a JDK 17 or newer"),
                r.output());
        assertTrue(r.output().contains("  - no mvn: the hardware tests run through Maven"), r.output());
        assertNothingRan(r);
    }

    /** A sysfs tree: a GPU and a ConnectX below one PCIe switch, a second GPU on another root complex. */
    static final class FakeMachine {
        final Path sys;
        final Path proc;
        final Path lspci;

        FakeMachine(Path root, boolean iommuTranslated, boolean acsRedirect) throws IOException {
            sys = root.resolve("sys");
            proc = Files.createDirectories(root.resolve("proc"));
            Files.createDirectories(sys.resolve("bus/pci/devices"));
            String sw = "pci0000:00/0000:00:01.0/0000:01:00.0";
            Path gpu = function(sw + "/0000:02:00.0/0000:03:00.0");
            Path nic = function(sw + "/0000:02:01.0/0000:04:00.0");
            Path farGpu = function("pci0000:80/0000:80:01.0/0000:81:00.0");
            for (String bridge : List.of("pci0000:00/0000:00:01.0", sw, sw + "/0000:02:00.0", sw + "/0000:02:01.0",
                    "pci0000:80/0000:80:01.0")) {
                function(bridge);
            }
            for (Path g : List.of(gpu, farGpu)) {
                Files.writeString(g.resolve("vendor"), "0x10de\n");
                Files.writeString(g.resolve("class"), "0x030200\n");
            }
            Files.writeString(nic.resolve("numa_node"), "0\n");
            Files.writeString(farGpu.resolve("numa_node"), "1\n");
            Path ib = Files.createDirectories(sys.resolve("class/infiniband/mlx5_0"));
            Files.createSymbolicLink(ib.resolve("device"), ib.relativize(nic));
            Files.writeString(ib.resolve("fw_ver"), "28.39.1002\n");
            Files.writeString(ib.resolve("board_id"), "MT_0000000838\n");
            Files.writeString(ib.resolve("hca_type"), "MT4129\n");
            Path port = Files.createDirectories(ib.resolve("ports/1"));
            Files.writeString(port.resolve("state"), "4: ACTIVE\n");
            Files.writeString(port.resolve("link_layer"), "Ethernet\n");
            Files.writeString(port.resolve("rate"), "200 Gb/sec (4X HDR)\n");
            gid(port, 0, "fe80:0000:0000:0000:0000:0000:0000:0001", "IB/RoCE v1");
            gid(port, 1, "0000:0000:0000:0000:0000:ffff:0a00:0001", "RoCE v2");
            Path ecn = Files.createDirectories(sys.resolve("class/net/eth2/ecn/roce_np/enable"));
            for (int p = 0; p < 8; p++) {
                Files.writeString(ecn.resolve(Integer.toString(p)), (p == 3 ? "1" : "0") + "\n");
            }
            Files.writeString(sys.resolve("class/net/eth2/mtu"), "4200\n");
            Files.writeString(proc.resolve("cmdline"), "BOOT_IMAGE=/vmlinuz root=/dev/sda1 "
                    + (iommuTranslated ? "intel_iommu=on" : "intel_iommu=on iommu=pt") + " quiet\n");
            for (int i = 0; i < 3; i++) {
                Files.createDirectories(sys.resolve("kernel/iommu_groups/" + i));
            }
            for (Path f : List.of(gpu, nic, farGpu)) {
                Files.writeString(Files.createDirectories(f.resolve("iommu_group")).resolve("type"),
                        (iommuTranslated ? "DMA-FQ" : "identity") + "\n");
            }
            lspci = root.resolve("lspci");
            Files.writeString(lspci, "#!/bin/bash\ncase \"$3\" in\n  0000:02:00.0) echo \"\tACSCtl:\tSrcValid+ "
                    + (acsRedirect ? "ReqRedir+ CmpltRedir+" : "ReqRedir- CmpltRedir-") + " UpstreamFwd+\";;\n"
                    + "  0000:01:00.0|0000:02:01.0) echo \"\tACSCtl:\tSrcValid- ReqRedir- CmpltRedir-\";;\n"
                    + "esac\n");
            assertTrue(lspci.toFile().setExecutable(true));
        }

        private Path function(String chain) throws IOException {
            Path dir = Files.createDirectories(sys.resolve("devices/" + chain));
            Path link = sys.resolve("bus/pci/devices/" + dir.getFileName());
            if (!Files.exists(link, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                Files.createSymbolicLink(link, link.getParent().relativize(dir));
            }
            return dir;
        }

        private static void gid(Path port, int index, String gid, String type) throws IOException {
            Files.writeString(Files.createDirectories(port.resolve("gids")).resolve(Integer.toString(index)),
                    gid + "\n");
            Files.writeString(Files.createDirectories(port.resolve("gid_attrs/types")).resolve(Integer.toString(index)),
                    type + "\n");
            Files.writeString(Files.createDirectories(port.resolve("gid_attrs/ndevs")).resolve(Integer.toString(index)),
                    "eth2\n");
        }

        Map<String, String> environment() {
            return Map.of("GDA4J_REPORT_SYSFS", sys.toString(), "GDA4J_REPORT_PROC", proc.toString(), "LSPCI",
                    lspci.toString());
        }
    }

    @Test
    void factsRecordIommuAcsTheGpuNicPathAndTheNicsFirmwareAndPorts(@TempDir Path machine) throws Exception {
        FakeMachine m = new FakeMachine(machine, true, true);
        Result r = run(m.environment(), false, "--facts");
        assertEquals(0, r.exitCode(), r.output());
        String out = r.output();
        assertTrue(out.contains("- IOMMU: on (3 groups), TRANSLATED (DMA)") && out.contains("iommu=pt")
                && out.contains("0000:04:00.0: DMA-FQ") && out.contains("kernel command line: intel_iommu=on"), out);
        assertTrue(out.contains("- NIC mlx5_0 (0000:04:00.0): MT4129, firmware 28.39.1002, PSID MT_0000000838"), out);
        assertTrue(out.contains("port 1: ACTIVE, Ethernet, 200 Gb/sec (4X HDR)")
                && out.contains("[1] 0000:0000:0000:0000:0000:ffff:0a00:0001 RoCE v2 eth2")
                && out.contains("netdev eth2 MTU 4200") && out.contains("ECN (roce_np, priorities 0-7) 00010000"), out);
        assertTrue(out.contains("- GPU 0000:03:00.0 -> NIC mlx5_0 (0000:04:00.0): PIX/PXB: below PCIe switch port"
                + " 0000:01:00.0"), out);
        assertTrue(out.contains("0000:02:00.0: REDIRECT ON") && out.contains("peer traffic between GPU and NIC goes"
                + " up to the root complex"), out);
        assertTrue(out.contains("- GPU 0000:81:00.0 -> NIC mlx5_0 (0000:04:00.0): SYS: different root complexes on"
                + " NUMA nodes 1 and 0"), out);
        assertFalse(out.contains("connectx-report: running"), "--facts runs no check: " + out);
    }

    @Test
    void factsOfAPassthroughIommuAndNoAcsRedirectSaySo(@TempDir Path machine) throws Exception {
        FakeMachine m = new FakeMachine(machine, false, false);
        String out = run(m.environment(), false, "--facts").output();
        assertTrue(out.contains("- IOMMU: on (3 groups), passthrough (identity)"), out);
        assertTrue(out.contains("0000:02:00.0: no redirect") && !out.contains("REDIRECT ON"), out);
    }

    @Test
    void eachLikelyFirstRunFaultMapsToItsCauseAndItsCheck() throws Exception {
        NicCapabilities none = new NicCapabilities(1024, 1024, 256, false, true, false, false, true, false);
        Nic noAtomics = (Nic) java.lang.reflect.Proxy.newProxyInstance(Nic.class.getClassLoader(),
                new Class<?>[] {Nic.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "capabilities" -> none;
                    case "description" -> "mlx5_0 port 1";
                    default -> throw new UnsupportedOperationException(method.getName());
                });
        String atomics = "";
        try {
            NicSetupCheck.requireAtomics(noAtomics, "ibgda rank 0");
        } catch (NicException e) {
            atomics = e.getMessage();
        }
        String retry = new io.gda4j.mlx5.CompletionErrorException(new io.gda4j.mlx5.DecodedCqe(
                io.gda4j.mlx5.CqeOpcode.REQ_ERR, 0, 0x102, 7, io.gda4j.mlx5.Mlx5Opcode.RDMA_WRITE, 0,
                io.gda4j.mlx5.CqeSyndrome.TRANSPORT_RETRY_EXC.code(), 0x81)).getMessage();
        Map<String, String> faults = Map.of(
                // the fault, in the words gda4j reports it -> the start of the explanation
                "cuMemHostRegister(PORTABLE|DEVICEMAP|IOMEMORY) of the UAR page failed: set PeerMappingOverride=1",
                "UAR mapping:",
                "cannot register rank 0 heap (GPU memory [0x7f00, +4096)) with the NIC. 1) dma-buf: no", "dma-buf:",
                "cannot register rank 0 heap (GPU memory [0x7f00, +4096)) with the NIC: nvidia-peermem not loaded",
                "GPUDirect registration:",
                retry, "path:",
                "ibgda rank 0: posting on QP 0x000102 stalled for 10.000 s at counter 12", "doorbell register:",
                "ibgda rank 0: the send queue of QP 0x000102 stayed full for 10.000 s", "doorbell register:",
                atomics, "atomics:",
                "ibgda rank 0: a loopback RC connection on mlx5_0 port 1 failed: RDMA completion error ... "
                        + "TRANSPORT_RETRY_EXC (0x15)", "loopback:");
        for (Map.Entry<String, String> f : faults.entrySet()) {
            Result r = run(Map.of(), false, "--explain", f.getKey());
            assertEquals(0, r.exitCode(), r.output());
            assertTrue(r.output().startsWith(f.getValue()), () -> "'" + f.getKey() + "' should be explained as "
                    + f.getValue() + ", got: " + r.output());
        }
        String doorbell = run(Map.of(), false, "--explain", "posting on QP 0x000102 stalled for 1 s").output();
        assertTrue(doorbell.contains("ACS") && doorbell.contains("root ports"), doorbell);
        String path = run(Map.of(), false, "--explain", retry).output();
        assertTrue(path.contains("GDA4J_MLX5_GID_INDEX") && path.contains("subnet manager"), path);
    }

    @Test
    void anUnknownOptionIsRefusedAndHelpSaysWhatRuns() throws Exception {
        Result bad = run(Map.of(), false, "--nic-please");
        assertEquals(2, bad.exitCode(), bad.output());
        assertTrue(bad.output().contains("connectx-report: unknown option '--nic-please'"), bad.output());
        Result help = run(Map.of(), false, "--help");
        assertEquals(0, help.exitCode(), help.output());
        assertTrue(help.output().contains("GDA4J_NIC=mlx5"), help.output());
        assertTrue(help.output().contains("Mlx5IbgdaGpuTest"), help.output());
    }
}
