package io.gda4j.samples;

import io.gda4j.gdrcopy.Gdrcopy;
import io.gda4j.hostflag.HostFlags;
import io.gda4j.nic.topology.PciTopology;
import io.gda4j.world.WorldConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code gda4j info} works on any machine, GPU or not, and says how host flags will be written. */
@Timeout(30)
class InfoCommandTest {
    @TempDir
    Path sys;

    @Test
    void exitsZeroAndShowsGdrcopyAndTheHostFlagChoice() {
        CliRun run = CliRun.of("info");
        assertEquals(0, run.code(), run::toString);
        String out = run.out();
        String nl = System.lineSeparator();
        assertTrue(out.contains(nl + "gdrcopy" + nl + "  " + Gdrcopy.status().oneLine() + nl), out);
        assertTrue(out.contains("  " + HostFlags.choose(HostFlags.Backend.AUTO).describe() + nl), out);
        assertTrue(out.contains("host flag ") && out.contains(WorldConfig.HOST_FLAG_ENV), out);
    }

    @Test
    void printsTheGpuByNicSectionOfThisMachine() {
        CliRun run = CliRun.of("info");
        String out = run.out();
        String nl = System.lineSeparator();
        if (PciTopology.ofThisMachine().nics().isEmpty()) {
            assertTrue(out.contains(nl + "GPU x NIC: no RDMA NIC: sysfs lists none under /sys/class/infiniband" + nl),
                    out);
        } else {
            assertTrue(out.contains(nl + "GPU x NIC (PCIe distance from /sys, as nvidia-smi topo -m"), out);
        }
    }

    /** pci0000:17 - root port 17:01.0 - switch 18:00.0 - ports 18:08.0 (GPU 19:00.0) and 18:10.0 (mlx5_0 1a:00.0). */
    private void sysfsTree() throws IOException {
        Path up = sys.resolve("devices/pci0000:17/0000:17:01.0/0000:18:00.0");
        Path gpu = function(up.resolve("0000:18:08.0/0000:19:00.0"), "0x030200", "0x10de");
        Path nic = function(up.resolve("0000:18:10.0/0000:1a:00.0"), "0x020700", "0x15b3");
        Path ib = nic.resolve("infiniband/mlx5_0");
        Files.createDirectories(ib.resolve("ports/1"));
        Files.writeString(ib.resolve("ports/1/link_layer"), "InfiniBand\n");
        Files.writeString(ib.resolve("ports/1/state"), "4: ACTIVE\n");
        Files.createSymbolicLink(ib.resolve("device"), Path.of("../../../0000:1a:00.0"));
        Files.createDirectories(sys.resolve("class/infiniband"));
        Files.createSymbolicLink(sys.resolve("class/infiniband/mlx5_0"),
                sys.resolve("class/infiniband").relativize(ib));
        Files.createDirectories(sys.resolve("bus/pci/devices"));
        for (Path f : List.of(gpu, nic)) {
            Files.createSymbolicLink(sys.resolve("bus/pci/devices").resolve(f.getFileName()),
                    sys.resolve("bus/pci/devices").relativize(f));
        }
    }

    @Test
    void printsTheMatrixFromASysfsTree() throws IOException {
        sysfsTree();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            InfoCommand.printNicTopology(out, PciTopology.read(sys), List.of("00000000:19:00.0"));
        }
        List<String> lines = bytes.toString(StandardCharsets.UTF_8).lines().toList();
        assertEquals("GPU x NIC (PCIe distance from " + sys + ", as nvidia-smi topo -m; one NIC port per GPU on mlx5)",
                lines.get(0));
        assertEquals("            NIC0", lines.get(1));
        assertEquals("  GPU0       PIX", lines.get(2));
        assertTrue(lines.contains("  NIC0    0000:1a:00.0  mlx5_0  NUMA 0  port 1 InfiniBand ACTIVE"), lines.toString());
        assertTrue(lines.get(lines.size() - 1)
                .startsWith("  GPU0 -> mlx5_0 port 1 (PIX): closest to GPU 0000:19:00.0"), lines.toString());
    }

    /** info --json has the GPU x NIC section as data: the NIC, its port, each GPU's path to it and its choice. */
    @Test
    void theGpuByNicSectionIsDataInJson() throws IOException {
        sysfsTree();
        java.util.Map<String, Object> o = InfoCommand.nicTopology(PciTopology.read(sys), List.of("00000000:19:00.0"));
        String json = Json.of(o);
        JsonSyntax.check(json);
        assertTrue(json.contains("\"nics\":[{\"name\":\"mlx5_0\",\"pciBusId\":\"0000:1a:00.0\",\"numaNode\":0,"
                + "\"ports\":[{\"number\":1,\"linkLayer\":\"InfiniBand\",\"state\":\"ACTIVE\"}]}]"), json);
        assertTrue(json.contains("\"gpus\":[{\"gpu\":0,\"pciBusId\":\"0000:19:00.0\",\"numaNode\":0,\"paths\":[\"PIX\"],"
                + "\"port\":\"mlx5_0 port 1 (PIX)\",\"reason\":\"closest to GPU 0000:19:00.0"), json);
        String none = Json.of(InfoCommand.nicTopology(PciTopology.read(sys.resolve("empty")), List.of()));
        assertTrue(none.contains("\"note\":\"no RDMA NIC"), none);
    }

    /** Everything info prints is in info --json: the peer matrix, GPU x NIC, NICs, gdrcopy, the launch, the flush. */
    @Test
    void infoJsonHoldsEverySectionInfoPrints() {
        CliRun r = CliRun.of("info", "--json");
        assertEquals(0, r.code(), r::toString);
        String json = r.out().strip();
        JsonSyntax.check(json);
        for (String key : new String[] {"\"peerAccess\":[", "\"rdmaDevices\":[", "\"gpuNic\":{\"root\":",
            "\"nics\":{\"providers\":[{\"name\":", "\"launch\":", "\"ibgdaFlushRule\":", "\"gdrcopy\":{\"available\":",
            "\"kernels\":\"" + InfoCommand.KERNELS + "\"", "\"bindings\":\"JCuda "}) {
            assertTrue(json.contains(key), key + " missing: " + json);
        }
        assertTrue(json.contains("\"status\":" + Json.quote(Gdrcopy.status().oneLine())), json);
        assertTrue(json.contains("\"launch\":" + Json.quote(InfoCommand.describeLaunch(System.getenv()))), json);
        assertTrue(json.contains("\"hostFlagsAuto\":" + Json.quote(HostFlags.choose(HostFlags.Backend.AUTO)
                .describe())), json);
    }

    private static Path function(Path dir, String classCode, String vendor) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("class"), classCode + "\n");
        Files.writeString(dir.resolve("vendor"), vendor + "\n");
        Files.writeString(dir.resolve("numa_node"), "0\n");
        return dir;
    }

    @Test
    void theLaunchLineSaysWhichWorldThisProcessWouldOpen() {
        assertTrue(InfoCommand.describeLaunch(java.util.Map.of()).startsWith("no launcher"));
        String torchrun = InfoCommand.describeLaunch(WorldOptionsLaunchTest.TORCHRUN_RANK1);
        assertTrue(torchrun.contains("torchrun started this process as rank 1 of 2")
                && torchrun.contains("127.0.0.1:29501"), torchrun);
        String broken = InfoCommand.describeLaunch(java.util.Map.of("RANK", "0", "WORLD_SIZE", "2"));
        assertTrue(broken.startsWith("the launcher's environment is unusable") && broken.contains("LOCAL_RANK"), broken);
        assertTrue(CliRun.of("info").out().contains("Launch (which world"), "info prints the section");
    }

    @Test
    void everyLineOfInfoFitsIn120Columns() {
        CliRun r = CliRun.of("info");
        assertEquals(0, r.code(), r::toString);
        for (String line : r.out().lines().toList()) {
            boolean oneWord = !line.strip().contains(" ");
            assertTrue(line.length() <= InfoCommand.WIDTH || oneWord, line.length() + " columns: " + line);
        }
    }

    @Test
    void wrapBreaksAtSpacesAndIndentsTheRest() {
        assertEquals("  aaaa bbbb\n    cccc\nshort", InfoCommand.wrap("  aaaa bbbb cccc\nshort", 12));
        assertEquals("x".repeat(20), InfoCommand.wrap("x".repeat(20), 12), "a word longer than the width stays whole");
    }

    @Test
    void infoJsonIsOneTypedObjectWithEverySetting() {
        CliRun r = CliRun.of("info", "--json");
        assertEquals(0, r.code(), r::toString);
        String json = r.out().strip();
        assertEquals(1, r.out().strip().lines().count(), "one line: " + r.out());
        JsonSyntax.check(json);
        assertTrue(json.startsWith("{\"version\":\""), json);
        assertTrue(json.contains("\"cuda\":{\"available\":" + io.gda4j.cuda.Cuda.status().available()), json);
        for (io.gda4j.config.Setting<?> s : Configuration.all()) {
            assertTrue(json.contains("\"env\":\"" + s.envName() + "\",\"property\":\"" + s.propertyName() + "\""),
                    s.envName() + " missing: " + json);
        }
        assertTrue(json.contains("\"valid\":true"), json);
        assertTrue(json.contains("\"transports\":[{\"name\":"), json);
        assertTrue(json.contains("\"unknownSettings\":["), json);
    }

    @Test
    void jsonTextIsStrictlyTyped() {
        java.util.Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("a", Double.NaN);
        m.put("b", List.of(1, true, "x\"y"));
        m.put("c", null);
        assertEquals("{\"a\":null,\"b\":[1,true,\"x\\\"y\"],\"c\":null}", Json.of(m));
        JsonSyntax.check(Json.of(m));
    }
}
