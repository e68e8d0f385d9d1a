package io.gda4j.samples;

import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.CudaDevice;
import io.gda4j.cuda.CudaStatus;
import io.gda4j.gdrcopy.Gdrcopy;
import io.gda4j.gdrcopy.GdrcopyStatus;
import io.gda4j.hostflag.HostFlagUnavailableException;
import io.gda4j.hostflag.HostFlags;
import io.gda4j.proxy.ProxyConfig;
import io.gda4j.proxy.ProxyTransport;
import io.gda4j.transport.TransportProvider;
import io.gda4j.verbs.RdmaDevice;
import io.gda4j.verbs.RdmaDevices;
import io.gda4j.verbs.Verbs;
import io.gda4j.verbs.VerbsStatus;
import io.gda4j.world.ByteSize;
import io.gda4j.world.LocalWorld;
import io.gda4j.world.WorldConfig;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Options;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

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
                + "an RDMA device, libgdrapi and /dev/gdrdrv are present, which transports can therefore be used, how "
                + "the host will write flags that kernels poll (gdrcopy where usable, else mapped-pinned), and "
                + "the configuration gda4j resolved from the environment. Always exits 0: it is the place to find out "
                + "why something else cannot run.";
    }

    @Override
    public String examples() {
        return "  gda4j info\n";
    }

    @Override
    public Options options() {
        return new Options();
    }

    @Override
    public int run(CommandLine cmd, PrintStream out, PrintStream err) {
        out.println("gda4j " + Main.version() + " on Java " + System.getProperty("java.version") + " ("
                + System.getProperty("os.name") + " " + System.getProperty("os.arch") + ")");
        out.println();
        CudaStatus cuda = Cuda.status();
        List<CudaDevice> gpus = new ArrayList<>();
        out.println("CUDA");
        if (cuda.available()) {
            out.println("  driver        CUDA " + Cuda.driverVersionString() + " (driver API), " + cuda.deviceCount() + " GPU(s)");
            for (int i = 0; i < cuda.deviceCount(); i++) {
                gpus.add(Cuda.device(i));
            }
        } else {
            out.println("  unavailable   " + cuda.reason());
        }
        out.println("  bindings      JCuda " + jcudaVersion() + "; kernels ship as PTX for sm_90 built by CUDA 13.0 "
                + "(needs an R580 or newer driver)");
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
                        cell = String.valueOf(a.p2pPerformanceRank(b)) + (a.p2pNativeAtomics(b) ? "" : "*");
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
        VerbsStatus verbs = Verbs.status();
        out.println("  " + verbs.sentence());
        for (RdmaDevice d : RdmaDevices.list()) {
            out.printf(Locale.ROOT, "  device  %s  (node GUID %016x)%n", d.name(), d.nodeGuid());
        }
        out.println();
        out.println("NICs (for the ibgda transport)");
        for (io.gda4j.nic.NicProvider p : io.gda4j.nic.Nics.providers()) {
            out.printf(Locale.ROOT, "  %-9s %s%n", p.name(), p.unavailableReason().map(r -> "not available: " + r)
                    .orElse("available"));
        }
        io.gda4j.nic.NicSelection auto = io.gda4j.nic.Nics.select(io.gda4j.nic.NicChoice.AUTO);
        io.gda4j.nic.NicSelection configured = io.gda4j.ibgda.IbgdaTransport.describeSelection();
        out.println("  --nic auto: " + auto.reason() + (auto.found()
                && auto.provider().name().equals(io.gda4j.nic.Nic.EMULATED)
                ? "; figures it produces are labelled \"emulated NIC\"" : ""));
        if (!configured.reason().equals(auto.reason())) {
            out.println("  configured: " + configured.reason());
        }
        out.println();
        out.println("Transports");
        for (TransportProvider p : LocalWorld.providers()) {
            out.printf(Locale.ROOT, "  %-8s %s%n", p.name(), possibility(p, cuda, gpus));
        }
        out.println();
        out.println("IBGDA flush and fetched values");
        out.println("  " + io.gda4j.ibgda.IbgdaTransport.describeFlushRule());
        out.println();
        printGdrcopy(out);
        out.println();
        out.println("Configuration (environment / -D system property)");
        try {
            for (String line : WorldConfig.resolve().describe().split("\n")) {
                out.println("  " + line.strip());
            }
            String more = io.gda4j.ibgda.IbgdaConfig.resolve().describe()
                    + io.gda4j.nic.emulated.EmulatedNicConfig.resolve().describe();
            for (String line : more.split("\n")) {
                out.println("  " + line.strip());
            }
        } catch (IllegalArgumentException e) {
            out.println("  invalid: " + e.getMessage());
        }
        try {
            for (String line : ProxyConfig.resolve().describe().split("\n")) {
                out.println("  " + line.strip());
            }
        } catch (IllegalArgumentException e) {
            out.println("  invalid proxy setting: " + e.getMessage());
        }
        return 0;
    }

    /** gdrcopy's status, the host-flag backend auto takes here and why, and the configured one if it differs. */
    private static void printGdrcopy(PrintStream out) {
        out.println("gdrcopy");
        GdrcopyStatus gdrcopy = Gdrcopy.status();
        out.println("  " + gdrcopy.oneLine());
        out.println("  " + HostFlags.choose(HostFlags.Backend.AUTO, gdrcopy.isAvailable(), gdrcopy.sentence())
                .describe());
        HostFlags.Backend configured;
        try {
            configured = WorldConfig.resolve().hostFlag();
        } catch (IllegalArgumentException e) {
            return; // the configuration section below says what is wrong
        }
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
        if ("p2p".equals(p.name())) {
            List<String> pairs = new ArrayList<>();
            for (CudaDevice a : gpus) {
                for (CudaDevice b : gpus) {
                    if (a.ordinal() < b.ordinal() && a.canAccessPeer(b) && b.canAccessPeer(a)) {
                        pairs.add(a.ordinal() + "<->" + b.ordinal());
                    }
                }
            }
            if (gpus.size() < 2) {
                return "possible only between ranks sharing the one GPU (a second GPU is needed for GPU-to-GPU runs)";
            }
            return pairs.isEmpty() ? "not possible: no GPU pair has peer access" : "possible between GPUs " + String.join(", ", pairs);
        }
        if (ProxyTransport.NAME.equals(p.name())) {
            return "possible between any two ranks of this host (host proxy threads move the data with the copy "
                    + "engine; staged through the host where GPUs have no peer path)";
        }
        if (io.gda4j.ibgda.IbgdaTransport.NAME.equals(p.name())) {
            io.gda4j.nic.NicSelection s = io.gda4j.ibgda.IbgdaTransport.describeSelection();
            return s.found() ? "possible with the " + (s.provider().name().equals(io.gda4j.nic.Nic.EMULATED)
                    ? "emulated NIC (a software model; a test instrument, not a network)" : s.provider().name()
                    + " NIC") + " (--transport ibgda; auto prefers p2p where it works)"
                    : "not possible: " + s.reason();
        }
        return "on the class path";
    }

    private static String jcudaVersion() {
        Package p = jcuda.driver.JCudaDriver.class.getPackage();
        String v = p == null ? null : p.getImplementationVersion();
        return v == null ? "12.6.0" : v;
    }
}
