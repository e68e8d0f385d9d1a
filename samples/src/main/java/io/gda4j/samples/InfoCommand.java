package io.gda4j.samples;

import io.gda4j.bootstrap.BootstrapException;
import io.gda4j.config.Setting;
import io.gda4j.config.Settings;
import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.CudaDevice;
import io.gda4j.cuda.CudaStatus;
import io.gda4j.cuda.PtxModule;
import io.gda4j.gdrcopy.Gdrcopy;
import io.gda4j.gdrcopy.GdrcopyConfig;
import io.gda4j.gdrcopy.GdrcopyStatus;
import io.gda4j.hostflag.HostFlagUnavailableException;
import io.gda4j.hostflag.HostFlags;
import io.gda4j.nic.topology.NicAffinity;
import io.gda4j.nic.topology.NicPlacement;
import io.gda4j.nic.topology.PciDevice;
import io.gda4j.nic.topology.PciTopology;
import io.gda4j.transport.TransportProvider;
import io.gda4j.transport.Transports;
import io.gda4j.verbs.RdmaDevice;
import io.gda4j.verbs.RdmaDevices;
import io.gda4j.verbs.Verbs;
import io.gda4j.verbs.VerbsStatus;
import io.gda4j.world.ByteSize;
import io.gda4j.world.DeviceOps;
import io.gda4j.world.LocalWorld;
import io.gda4j.world.WorldConfig;
import io.gda4j.world.Worlds;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Option;
import org.apache.commons.cli.Options;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code gda4j info}: what this machine offers gda4j (CUDA, GPUs, peer access, RDMA, gdrcopy), which transports
 * are therefore possible, and the resolved configuration. Works, and says why things are missing, without a GPU.
 */
final class InfoCommand implements Command {
    @Override
    public String name() {
        return "info";
    }

    @Override
    public String summary() {
        return "CUDA, GPUs, peer-access matrix, RDMA and gdrcopy, and the transports they allow";
    }

    @Override
    public String description() {
        return "Prints the CUDA driver version, every GPU (name, memory, compute capability, PCI bus id), the "
                + "peer-access matrix between GPUs (P2P performance rank; '-' = no direct path), whether libibverbs, "
                + "an RDMA device, libgdrapi and /dev/gdrdrv are present, the GPU x NIC PCIe distance matrix and the "
                + "NIC port each GPU would use, which transports can therefore be used, how "
                + "the host will write flags that kernels poll (gdrcopy where usable, else mapped-pinned), and "
                + "every setting gda4j reads (GDA4J_* variables and gda4j.* properties) with its value and where it "
                + "came from; a bad value is marked with what the setting accepts. The first line sums up what this "
                + "machine can run. Always exits 0: it is the place to find out why something else cannot run.";
    }

    @Override
    public String examples() {
        return "  gda4j info\n  gda4j info --json      the same findings as one JSON object\n";
    }

    /** Lines of the report are wrapped to this many columns, continued under their first word. */
    static final int WIDTH = 120;

    @Override
    public Options options() {
        Options o = new Options();
        o.addOption(Option.builder().longOpt("json").desc("print the findings as one JSON object (for scripts)")
                .build());
        return o;
    }

    @Override
    public int run(CommandLine cmd, PrintStream out, PrintStream err) {
        ByteArrayOutputStream sections = new ByteArrayOutputStream();
        CudaStatus cuda = Cuda.status();
        VerbsStatus verbs = Verbs.status();
        List<String> possible = new ArrayList<>();
        List<Setting.Shown> settings = Configuration.show(System::getProperty, System::getenv);
        List<Map<String, Object>> transports = new ArrayList<>();
        try (PrintStream body = new PrintStream(sections, true, StandardCharsets.UTF_8)) {
            printSections(body, cuda, verbs, possible, transports, settings);
        }
        if (cmd.hasOption("json")) {
            out.println(Json.of(json(cuda, verbs, transports, settings, summary(cuda, possible, settings))));
            return 0;
        }
        out.println("gda4j " + Main.version() + " on Java " + System.getProperty("java.version") + " ("
                + System.getProperty("os.name") + " " + System.getProperty("os.arch") + ")");
        out.println(wrap(summary(cuda, possible, settings), WIDTH));
        out.println();
        // Each reason is printed where it belongs (CUDA, RDMA) and referred to elsewhere, not repeated.
        out.print(wrap(onceEach(sections.toString(StandardCharsets.UTF_8),
                List.of(cuda.available() ? "" : cuda.reason(), verbs.sentence()), List.of("CUDA", "RDMA")), WIDTH));
        return 0;
    }

    /** What the report says, as one object for scripts: the same findings, typed. */
    static Map<String, Object> json(CudaStatus cuda, VerbsStatus verbs, List<Map<String, Object>> transports,
                                    List<Setting.Shown> settings, String summary) {
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("version", Main.version());
        o.put("java", System.getProperty("java.version"));
        o.put("summary", summary.replaceFirst("^Summary: ", ""));
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("available", cuda.available());
        c.put("reason", cuda.available() ? null : cuda.reason());
        c.put("driver", cuda.available() ? Cuda.driverVersionString() : null);
        List<Object> gpus = new ArrayList<>();
        for (int i = 0; cuda.available() && i < cuda.deviceCount(); i++) {
            CudaDevice d = Cuda.device(i);
            Map<String, Object> g = new LinkedHashMap<>();
            g.put("ordinal", d.ordinal());
            g.put("name", d.name());
            g.put("memoryBytes", d.totalMemoryBytes());
            g.put("computeCapability", d.computeCapabilityMajor() + "." + d.computeCapabilityMinor());
            g.put("sms", d.multiprocessorCount());
            g.put("pciBusId", d.pciBusId());
            g.put("uuid", d.uuid());
            gpus.add(g);
        }
        c.put("gpus", gpus);
        if (cuda.available()) {
            c.put("workQueuesPerContext", Cuda.deviceMaxConnections());
            c.put("workQueuesSource", Cuda.deviceMaxConnectionsSource());
        }
        c.put("bindings", "JCuda " + Cuda.bindingVersion());
        c.put("kernels", KERNELS);
        o.put("cuda", c);
        List<CudaDevice> devices = new ArrayList<>();
        for (int i = 0; cuda.available() && i < cuda.deviceCount(); i++) {
            devices.add(Cuda.device(i));
        }
        o.put("peerAccess", peerAccess(devices));
        o.put("rdma", verbs.sentence());
        List<Object> rdmaDevices = new ArrayList<>();
        for (RdmaDevice d : RdmaDevices.list()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", d.name());
            m.put("nodeGuid", String.format(Locale.ROOT, "%016x", d.nodeGuid()));
            rdmaDevices.add(m);
        }
        o.put("rdmaDevices", rdmaDevices);
        o.put("gpuNic", nicTopology(PciTopology.ofThisMachine(), devices.isEmpty() ? null
                : devices.stream().map(CudaDevice::pciBusId).toList()));
        o.put("nics", nics());
        o.put("transports", transports);
        o.put("launch", describeLaunch(System.getenv()));
        o.put("ibgdaFlushRule", io.gda4j.ibgda.IbgdaConfig.describeFlushRule());
        o.put("gdrcopy", gdrcopy());
        List<Object> list = new ArrayList<>();
        for (Setting.Shown s : settings) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("setting", s.setting().label());
            m.put("env", s.setting().envName());
            m.put("property", s.setting().propertyName());
            m.put("value", s.value());
            m.put("source", s.source().word());
            m.put("valid", s.valid());
            m.put("problem", s.valid() ? null : s.problem());
            list.add(m);
        }
        o.put("settings", list);
        List<Object> unknown = new ArrayList<>();
        for (Configuration.Unknown u : Configuration.unknown(System.getenv(), System.getProperties())) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put(u.property() ? "property" : "env", u.name());
            m.put("closest", u.closest());
            unknown.add(m);
        }
        o.put("unknownSettings", unknown);
        return o;
    }

    private static final Pattern PTX_TARGET = Pattern.compile("^\\s*\\.target\\s+([^\\s,]+)", Pattern.MULTILINE);
    private static final Pattern PTX_RELEASE = Pattern.compile("Cuda compilation tools, release ([0-9.]+)");

    /** What the kernels ship as, as the CUDA section says it: read from the toolkit's PTX, or why it is missing. */
    static final String KERNELS = shippedKernels();

    /** The target of the toolkit's {@code ops} PTX and the CUDA release nvcc wrote in its header. */
    static String shippedKernels() {
        String ptx;
        try {
            ptx = new String(PtxModule.readPtx(DeviceOps.MODULE), StandardCharsets.US_ASCII);
        } catch (IllegalArgumentException e) {
            return "PTX, but none was found: " + e.getMessage();
        }
        Matcher target = PTX_TARGET.matcher(ptx);
        Matcher release = PTX_RELEASE.matcher(ptx);
        return "PTX for " + (target.find() ? target.group(1) : "an unnamed target") + " built by CUDA "
                + (release.find() ? release.group(1) : "(release not stated)") + " (needs an R580 or newer driver)";
    }

    /**
     * The peer-access matrix as data: one entry per ordered pair of GPUs, with peer access, the P2P performance rank
     * and native atomics where there is access (what the printed matrix shows as a number, '*' or '-').
     */
    static List<Object> peerAccess(List<CudaDevice> gpus) {
        List<Object> out = new ArrayList<>();
        for (CudaDevice a : gpus) {
            for (CudaDevice b : gpus) {
                if (a.ordinal() == b.ordinal()) {
                    continue;
                }
                Map<String, Object> m = new LinkedHashMap<>();
                boolean access = a.canAccessPeer(b);
                m.put("from", a.ordinal());
                m.put("to", b.ordinal());
                m.put("access", access);
                m.put("performanceRank", access ? a.p2pPerformanceRank(b) : null);
                m.put("nativeAtomics", access ? a.nativeAtomicsWith(b) : null);
                out.add(m);
            }
        }
        return out;
    }

    /**
     * The GPU x NIC section as data, read from {@code topology} as {@link #printNicTopology} reads it: the NICs and
     * their ports, each GPU's PCIe path to each NIC ({@code nvidia-smi topo -m}'s words) and the port its rank would
     * open (or why none).
     */
    static Map<String, Object> nicTopology(PciTopology topology, List<String> gpuBusIds) {
        List<String> gpus = gpuBusIds != null ? gpuBusIds : topology.gpus().stream().map(PciDevice::busId).toList();
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("root", topology.root().toString());
        o.put("gpusFrom", gpuBusIds != null ? "CUDA" : "sysfs");
        NicPlacement placement;
        try {
            placement = io.gda4j.ibgda.IbgdaConfig.resolve(Settings.ofProcess()).placement();
        } catch (IllegalArgumentException e) {
            placement = NicPlacement.defaults();
            o.put("placementNote", "the default NIC settings: the configured ones are bad (see settings)");
        }
        List<Object> nics = new ArrayList<>();
        for (io.gda4j.nic.topology.PciNic nic : topology.nics()) {
            Map<String, Object> n = new LinkedHashMap<>();
            n.put("name", nic.name());
            n.put("pciBusId", nic.device().busId());
            n.put("numaNode", nic.device().numaNode());
            List<Object> ports = new ArrayList<>();
            for (io.gda4j.nic.topology.NicPort port : nic.ports()) {
                Map<String, Object> pm = new LinkedHashMap<>();
                pm.put("number", port.number());
                pm.put("linkLayer", port.linkLayer());
                pm.put("state", port.state().replaceFirst("^[0-9]+: ", ""));
                ports.add(pm);
            }
            n.put("ports", ports);
            nics.add(n);
        }
        o.put("nics", nics);
        NicAffinity affinity = new NicAffinity(topology, placement);
        List<Object> rows = new ArrayList<>();
        for (int g = 0; g < gpus.size(); g++) {
            Map<String, Object> r = new LinkedHashMap<>();
            java.util.Optional<PciDevice> gpu = topology.device(gpus.get(g));
            r.put("gpu", g);
            r.put("pciBusId", PciTopology.normalizeBusId(gpus.get(g)));
            r.put("numaNode", gpu.map(PciDevice::numaNode).orElse(null));
            List<Object> paths = new ArrayList<>();
            for (io.gda4j.nic.topology.PciNic nic : topology.nics()) {
                paths.add(gpu.map(d -> d.pathTo(nic.device()).name()).orElse(null));
            }
            r.put("paths", paths);
            if (!topology.nics().isEmpty()) {
                try {
                    io.gda4j.nic.topology.NicAssignment a = affinity.choose(g, gpus.size(), gpus.get(g));
                    r.put("port", a.label());
                    r.put("reason", a.reason());
                } catch (io.gda4j.nic.NicException e) {
                    r.put("port", null);
                    r.put("reason", "refused: " + e.getMessage());
                }
            }
            rows.add(r);
        }
        o.put("gpus", rows);
        if (topology.nics().isEmpty()) {
            o.put("note", "no RDMA NIC: sysfs lists none under " + topology.root().resolve("class/infiniband"));
        }
        return o;
    }

    /** The NIC providers, what --nic auto would take here, and the configured choice where it differs. */
    private static Map<String, Object> nics() {
        Map<String, Object> o = new LinkedHashMap<>();
        List<Object> providers = new ArrayList<>();
        for (io.gda4j.nic.NicProvider p : io.gda4j.nic.Nics.providers()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", p.name());
            m.put("available", p.unavailableReason().isEmpty());
            m.put("reason", p.unavailableReason().orElse(null));
            providers.add(m);
        }
        o.put("providers", providers);
        io.gda4j.nic.NicSelection auto = io.gda4j.nic.Nics.select(io.gda4j.nic.NicChoice.AUTO);
        io.gda4j.nic.NicSelection configured = io.gda4j.nic.NicConfig.selection(Settings.ofProcess());
        o.put("auto", auto.reason());
        o.put("autoFound", auto.found() ? auto.provider().name() : null);
        o.put("configured", configured.reason());
        return o;
    }

    /** gdrcopy's status and the host-flag backend auto takes (and the configured one), as the gdrcopy section says. */
    private static Map<String, Object> gdrcopy() {
        Map<String, Object> o = new LinkedHashMap<>();
        GdrcopyStatus gdrcopy = Gdrcopy.status();
        o.put("available", gdrcopy.isAvailable());
        o.put("status", gdrcopy.oneLine());
        o.put("hostFlagsAuto", HostFlags.choose(HostFlags.Backend.AUTO, gdrcopy.isAvailable(), gdrcopy.sentence())
                .describe());
        Setting.Shown shown = WorldConfig.HOST_FLAG.show(System::getProperty, System::getenv);
        if (shown.valid() && WorldConfig.HOST_FLAG.resolve() != HostFlags.Backend.AUTO) {
            try {
                o.put("hostFlagsConfigured", HostFlags.choose(WorldConfig.HOST_FLAG.resolve(), gdrcopy.isAvailable(),
                        gdrcopy.sentence()).describe());
            } catch (HostFlagUnavailableException e) {
                o.put("hostFlagsConfigured", "unusable: " + e.getMessage());
            }
        }
        GdrcopyConfig config = GdrcopyConfig.fromSystemProperties();
        o.put("library", config.libraryName());
        o.put("deviceNode", config.deviceNode());
        return o;
    }

    /**
     * {@code text} with every line longer than {@code width} broken at spaces, the rest indented two columns past
     * the line's own indent. A word longer than the width stays whole.
     */
    static String wrap(String text, int width) {
        StringBuilder b = new StringBuilder();
        for (String line : text.split("\n", -1)) {
            int indent = 0;
            while (indent < line.length() && line.charAt(indent) == ' ') {
                indent++;
            }
            String rest = line;
            String next = " ".repeat(Math.min(indent + 2, width / 2));
            while (rest.length() > width) {
                int cut = rest.lastIndexOf(' ', width);
                if (cut <= next.length() || rest.substring(0, cut).isBlank()) {
                    cut = rest.indexOf(' ', width);
                    if (cut < 0) {
                        break;
                    }
                }
                b.append(rest, 0, cut).append('\n');
                rest = next + rest.substring(cut + 1).stripLeading();
            }
            b.append(rest).append('\n');
        }
        return b.substring(0, b.length() - 1);
    }

    /** Which world this process would open: one process of a launch (which, rank, root), or a local world. */
    static String describeLaunch(Map<String, String> env) {
        try {
            return Worlds.launchOf(env).map(l -> String.format(Locale.ROOT, "%s started this process as rank %d of "
                    + "%d (local %d of %d on this host); the bootstrap root is %s:%d: a ProcessWorld, one rank here",
                    l.launcher().word(), l.rank(), l.worldSize(), l.localRank(), l.localWorldSize(),
                    l.root().getHostString(), l.root().getPort()))
                    .orElse("no launcher (or a launch of one process): a LocalWorld, every GPU of --gpus or "
                            + WorldConfig.GPUS_ENV + " in this process");
        } catch (BootstrapException e) {
            return "the launcher's environment is unusable: " + e.getMessage();
        }
    }

    /** The first line after the version: what this machine can run, and any bad setting. */
    static String summary(CudaStatus cuda, List<String> possibleTransports, List<Setting.Shown> settings) {
        StringBuilder b = new StringBuilder("Summary: ");
        if (!cuda.available()) {
            b.append("no CUDA GPU, so latency, bandwidth, compare, hostflag and moe cannot run here; the build, the "
                    + "CPU tests, the JMH benchmarks and 'compare --from' can (see \"Without a GPU\")");
        } else if (possibleTransports.isEmpty()) {
            b.append(cuda.deviceCount()).append(" GPU(s), but no transport can run (see Transports)");
        } else {
            b.append(cuda.deviceCount()).append(" GPU(s); transports that can run: ")
                    .append(String.join(", ", possibleTransports));
        }
        List<String> bad = new ArrayList<>();
        for (Setting.Shown s : settings) {
            if (!s.valid()) {
                bad.add(s.source() == Setting.Source.PROPERTY ? "-D" + s.setting().propertyName()
                        : s.setting().envName());
            }
        }
        if (!bad.isEmpty()) {
            b.append("; ").append(bad.size()).append(bad.size() == 1 ? " bad setting: " : " bad settings: ")
                    .append(String.join(", ", bad)).append(" (other commands exit 2 until it is fixed; see "
                    + "Configuration)");
        }
        return b.toString();
    }

    /**
     * {@code text} with every occurrence of each reason after its first replaced by "see WHERE above", so a long
     * reason is read once.
     */
    static String onceEach(String text, List<String> reasons, List<String> where) {
        String t = text;
        for (int i = 0; i < reasons.size(); i++) {
            String r = reasons.get(i);
            int first = r == null || r.isBlank() ? -1 : t.indexOf(r);
            if (first < 0) {
                continue;
            }
            int after = first + r.length();
            t = t.substring(0, after) + t.substring(after).replace(r, "see " + where.get(i) + " above");
        }
        return t;
    }

    private static void printSections(PrintStream out, CudaStatus cuda, VerbsStatus verbs, List<String> possible,
                                      List<Map<String, Object>> transports, List<Setting.Shown> settings) {
        List<CudaDevice> gpus = new ArrayList<>();
        out.println("CUDA");
        if (cuda.available()) {
            out.println("  driver        CUDA " + Cuda.driverVersionString() + " (driver API), " + cuda.deviceCount() + " GPU(s)");
            out.println("  work queues   " + Cuda.deviceMaxConnections() + " per context: "
                    + Cuda.deviceMaxConnectionsSource());
            for (int i = 0; i < cuda.deviceCount(); i++) {
                gpus.add(Cuda.device(i));
            }
        } else {
            out.println("  unavailable   " + cuda.reason());
        }
        out.println("  bindings      JCuda " + Cuda.bindingVersion() + "; kernels ship as " + KERNELS);
        out.println();
        if (!gpus.isEmpty()) {
            out.println("GPUs");
            for (CudaDevice d : gpus) {
                out.printf(Locale.ROOT, "  %d  %-24s %8s  sm_%d%d  %3d SMs  PCI %s  %s%n", d.ordinal(), d.name(),
                        ByteSize.format(d.totalMemoryBytes() >> 20 << 20), d.computeCapabilityMajor(),
                        d.computeCapabilityMinor(), d.multiprocessorCount(), d.pciBusId(), d.uuid());
            }
            out.println();
            out.println("Peer access (row = from, column = to; number = P2P performance rank, '-' = none)");
            StringBuilder head = new StringBuilder("       ");
            for (CudaDevice d : gpus) {
                head.append(String.format(Locale.ROOT, "%6s", "GPU" + d.ordinal()));
            }
            out.println(head);
            for (CudaDevice a : gpus) {
                StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "  GPU%-2d", a.ordinal()));
                for (CudaDevice b : gpus) {
                    String cell;
                    if (a.ordinal() == b.ordinal()) {
                        cell = "self";
                    } else if (a.canAccessPeer(b)) {
                        cell = String.valueOf(a.p2pPerformanceRank(b)) + (a.nativeAtomicsWith(b) ? "" : "*");
                    } else {
                        cell = "-";
                    }
                    row.append(String.format(Locale.ROOT, "%6s", cell));
                }
                out.println(row);
            }
            out.println("  (* = no native atomics over this link)");
            out.println();
        }
        out.println("RDMA (libibverbs / libmlx5)");
        out.println("  " + verbs.sentence());
        for (RdmaDevice d : RdmaDevices.list()) {
            out.printf(Locale.ROOT, "  device  %s  (node GUID %016x)%n", d.name(), d.nodeGuid());
        }
        out.println();
        printNicTopology(out, PciTopology.ofThisMachine(), gpus.isEmpty() ? null
                : gpus.stream().map(CudaDevice::pciBusId).toList());
        out.println();
        out.println("NICs (for the ibgda transport)");
        for (io.gda4j.nic.NicProvider p : io.gda4j.nic.Nics.providers()) {
            out.printf(Locale.ROOT, "  %-9s %s%n", p.name(), p.unavailableReason().map(r -> "not available: " + r)
                    .orElse("available"));
        }
        io.gda4j.nic.NicSelection auto = io.gda4j.nic.Nics.select(io.gda4j.nic.NicChoice.AUTO);
        io.gda4j.nic.NicSelection configured = io.gda4j.nic.NicConfig.selection(Settings.ofProcess());
        out.println("  --nic auto: " + auto.reason() + (auto.found()
                && auto.provider().name().equals(io.gda4j.nic.Nic.EMULATED)
                ? "; figures it produces are labelled \"emulated NIC\"" : ""));
        if (!configured.reason().equals(auto.reason())) {
            out.println("  configured: " + configured.reason());
        }
        out.println();
        out.println("Transports");
        for (TransportProvider p : Transports.providers(Settings.ofProcess())) {
            String what = possibility(p, cuda, gpus);
            if (what.startsWith("possible")) {
                possible.add(p.name());
            }
            Map<String, Object> t = new LinkedHashMap<>();
            t.put("name", p.name());
            t.put("possible", what.startsWith("possible"));
            t.put("status", what);
            transports.add(t);
            out.printf(Locale.ROOT, "  %-8s %s%n", p.name(), what);
        }
        out.println();
        out.println("Launch (which world gda4j latency and Worlds.create() open)");
        out.println("  " + describeLaunch(System.getenv()));
        out.println();
        out.println("IBGDA flush and fetched values");
        out.println("  " + io.gda4j.ibgda.IbgdaConfig.describeFlushRule());
        out.println();
        printGdrcopy(out);
        out.println();
        if (!cuda.available()) {
            out.println("Without a GPU (what works on this machine)");
            out.println("  mvn -B verify                        the build and the CPU tests: layouts against the headers,"
                    + " encoders, the emulated NIC engine, the proxy FIFO, the command line");
            out.println("  java -jar benchmarks/target/gda4j-benchmarks.jar ProxyPollBenchmark"
                    + "   JMH benchmarks of the host paths");
            out.println("  gda4j compare --from FILE.csv [--plot FILE.png]   print and chart a 'compare --csv' measured"
                    + " on a GPU machine");
            out.println();
        }
        printConfiguration(out, settings);
    }

    /** Every setting by group: value, where it came from, its names; a bad one marked, with what it accepts. */
    private static void printConfiguration(PrintStream out, List<Setting.Shown> settings) {
        out.println("Configuration (a -D system property wins over the environment variable, which wins over the"
                + " default; an empty value counts as unset)");
        int i = 0;
        for (Configuration.Group g : Configuration.GROUPS) {
            out.println("  " + g.name());
            for (int k = 0; k < g.settings().size(); k++, i++) {
                Setting.Shown s = settings.get(i);
                Setting<?> setting = s.setting();
                String value = s.valid() ? s.value() : "BAD '" + s.value() + "'";
                String head = String.format(Locale.ROOT, "    %-36s %-16s %-12s", setting.label(), value,
                        s.source().word());
                String names = setting.envName() + " / -D" + setting.propertyName();
                String note = setting.note() == null ? "" : "(" + setting.note() + ")";
                // What does not fit goes under its setting, a part per line, so the names stay whole.
                StringBuilder line = new StringBuilder(head);
                for (String part : new String[] {names, note}) {
                    if (part.isEmpty()) {
                        continue;
                    }
                    int lastLine = line.lastIndexOf("\n") + 1;
                    if (line.length() - lastLine + 2 + part.length() <= WIDTH) {
                        line.append(line.length() == head.length() ? " " : "  ").append(part);
                    } else {
                        line.append("\n      ").append(part);
                    }
                }
                out.println(line);
                if (!s.valid()) {
                    out.println("      ^ " + s.problem());
                }
            }
        }
        List<Configuration.Unknown> unknown = Configuration.unknown(System.getenv(), System.getProperties());
        if (!unknown.isEmpty()) {
            out.println("  not gda4j settings (ignored)");
            for (Configuration.Unknown u : unknown) {
                out.println("    " + u.message());
            }
        }
        GdrcopyConfig gdrcopy = GdrcopyConfig.fromSystemProperties();
        out.println("  gdrcopy (system properties only)");
        out.printf(Locale.ROOT, "    %-36s %-16s %-12s -D%s%n", "libgdrapi to load", gdrcopy.libraryName(), "",
                GdrcopyConfig.LIBRARY_PROP_NAME);
        out.printf(Locale.ROOT, "    %-36s %-16s %-12s -D%s%n", "gdrdrv device node checked", gdrcopy.deviceNode(), "",
                GdrcopyConfig.DEVICE_PROP_NAME);
    }

    /**
     * The GPU x NIC distance matrix ({@code nvidia-smi topo -m}'s words) and the NIC port each GPU's rank would
     * open, read from {@code topology}; {@code gpuBusIds} are CUDA's GPUs, or null for the GPUs sysfs lists.
     */
    static void printNicTopology(PrintStream out, PciTopology topology, List<String> gpuBusIds) {
        List<String> gpus = gpuBusIds != null ? gpuBusIds : topology.gpus().stream().map(PciDevice::busId).toList();
        NicPlacement placement;
        String note = "";
        try {
            placement = io.gda4j.ibgda.IbgdaConfig.resolve(Settings.ofProcess()).placement();
        } catch (IllegalArgumentException e) {
            placement = NicPlacement.defaults();
            note = " with the default NIC settings (the configuration section says what is wrong)";
        }
        List<String> report = new NicAffinity(topology, placement).report(gpus);
        if (report.size() == 1) {
            out.println("GPU x NIC: " + report.get(0)); // no RDMA NIC: nothing to tabulate
            return;
        }
        out.println("GPU x NIC (PCIe distance from " + topology.root() + ", as nvidia-smi topo -m; one NIC port per"
                + " GPU on mlx5" + note + (gpuBusIds == null ? "; GPUs as sysfs lists them" : "") + ")");
        for (String line : report) {
            out.println(line.isEmpty() ? "" : "  " + line);
        }
    }

    /** gdrcopy's status, the host-flag backend auto takes here and why, and the configured one if it differs. */
    private static void printGdrcopy(PrintStream out) {
        out.println("gdrcopy");
        GdrcopyStatus gdrcopy = Gdrcopy.status();
        out.println("  " + gdrcopy.oneLine());
        out.println("  " + HostFlags.choose(HostFlags.Backend.AUTO, gdrcopy.isAvailable(), gdrcopy.sentence())
                .describe());
        Setting.Shown shown = WorldConfig.HOST_FLAG.show(System::getProperty, System::getenv);
        if (!shown.valid()) {
            return; // the configuration section below says what is wrong
        }
        HostFlags.Backend configured = WorldConfig.HOST_FLAG.resolve();
        if (configured != HostFlags.Backend.AUTO) {
            try {
                out.println("  configured " + HostFlags.choose(configured, gdrcopy.isAvailable(), gdrcopy.sentence())
                        .describe() + " by " + WorldConfig.HOST_FLAG_ENV + " / -D" + WorldConfig.HOST_FLAG_PROP_NAME);
            } catch (HostFlagUnavailableException e) {
                out.println("  configured host flags: unusable: " + e.getMessage());
            }
        }
    }

    private static String possibility(TransportProvider p, CudaStatus cuda, List<CudaDevice> gpus) {
        if (!cuda.available()) {
            return "not possible: no CUDA (" + cuda.reason() + ")";
        }
        return p.possibleHere(gpus);
    }
}
