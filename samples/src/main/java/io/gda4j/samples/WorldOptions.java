package io.gda4j.samples;

import io.gda4j.bootstrap.BootstrapException;
import io.gda4j.bootstrap.LaunchEnvironment;
import io.gda4j.config.Settings;
import io.gda4j.cuda.Cuda;
import io.gda4j.cuda.CudaStatus;
import io.gda4j.nic.NicChoice;
import io.gda4j.nic.NicConfig;
import io.gda4j.proxy.ProxyConfig;
import io.gda4j.transport.TransportProvider;
import io.gda4j.transport.Transports;
import io.gda4j.world.LocalWorld;
import io.gda4j.world.ProcessWorld;
import io.gda4j.world.World;
import io.gda4j.world.WorldConfig;
import io.gda4j.world.WorldSetupException;
import io.gda4j.world.Worlds;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Option;
import org.apache.commons.cli.Options;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Options every two-rank benchmark shares (transport, GPUs, the pair, timeout, output format), their validation,
 * and opening the world they describe.
 */
final class WorldOptions {
    final String transport;
    final List<Integer> gpus;
    final int rank;
    final int peer;
    final Duration timeout;
    final ResultTable.Format format;
    /** The --nic choice, or null to keep the configured one (GDA4J_NIC / -Dgda4j.nic). */
    final NicChoice nic;
    /** The launch this process is one process of (torchrun, mpirun, srun, GDA4J_*), or null when it runs alone. */
    final LaunchEnvironment launch;
    /** The --proxy-handler choice, or null to keep the configured one (GDA4J_PROXY_HANDLER). */
    final ProxyConfig.Handler proxyHandler;

    private WorldOptions(String transport, List<Integer> gpus, int rank, int peer, Duration timeout, ResultTable.Format format,
                         NicChoice nic, LaunchEnvironment launch, ProxyConfig.Handler proxyHandler) {
        this.proxyHandler = proxyHandler;
        this.launch = launch;
        this.transport = transport;
        this.gpus = gpus;
        this.rank = rank;
        this.peer = peer;
        this.timeout = timeout;
        this.format = format;
        this.nic = nic;
    }

    static void addTo(Options o) {
        o.addOption(Option.builder().longOpt("transport").hasArg().argName("NAME")
                .desc("how rank reaches peer: auto (the first of " + transportNames() + " that can) or a name"
                        + " (default: " + Transports.TRANSPORT_ENV + " or auto)").build());
        addPairOptions(o);
    }

    /** {@code --proxy-handler}, for the commands that measure over the proxy (latency, bandwidth, moe). */
    static void addProxyHandlerOption(Options o) {
        o.addOption(Option.builder().longOpt("proxy-handler").hasArg().argName("H")
                .desc("auto (copy engine for a peer on this host, verbs across hosts), copy or verbs (default "
                        + ProxyConfig.HANDLER_ENV + ")").build());
    }

    /** The options without --transport, for commands that choose transports themselves (compare). */
    static void addPairOptions(Options o) {
        o.addOption(Option.builder().longOpt("nic").hasArg().argName("NIC")
                .desc("NIC of the ibgda transport: auto (mlx5 if an RDMA device exists, else the emulated NIC), mlx5"
                        + " or emulated (default: " + NicConfig.NIC_ENV + " or auto). Emulated NIC figures are"
                        + " labelled as such").build());
        o.addOption(Option.builder().longOpt("gpus").hasArg().argName("LIST")
                .desc("GPU of each rank, e.g. 0,1 (default 0,1). Listing a GPU twice puts two ranks on it: "
                        + "useful to test on one GPU, not for timings. Under a launcher (torchrun, mpirun, srun): the "
                        + "GPU of each process of this host, in local-rank order (default: the local rank's GPU)")
                .build());
        o.addOption(Option.builder().longOpt("rank").hasArg().argName("R").desc("the measuring rank (default 0)").build());
        o.addOption(Option.builder().longOpt("peer").hasArg().argName("P").desc("the other rank (default 1)").build());
        o.addOption(Option.builder().longOpt("timeout-ms").hasArg().argName("MS")
                .desc("device-side wait timeout; a stuck run fails with a message after this long (default "
                        + WorldConfig.WAIT_TIMEOUT_ENV + " / -D" + WorldConfig.WAIT_TIMEOUT_PROP_NAME + ", else "
                        + WorldConfig.WAIT_TIMEOUT_DEFAULT + ")").build());
        o.addOption(Option.builder().longOpt("csv").desc("print CSV instead of a table").build());
        o.addOption(Option.builder().longOpt("json").desc("print JSON instead of a table").build());
    }

    /** The transports on the class path, in auto-preference order, e.g. "p2p, ibgda, proxy". */
    static String transportNames() {
        List<String> names = new ArrayList<>(Transports.names());
        names.remove(Transports.AUTO);
        return String.join(", ", names);
    }

    /**
     * The transports on the class path that connect ranks of different processes of one host (what a launched
     * process can compare), in auto-preference order, e.g. "p2p,proxy".
     */
    static String transportNamesAcrossProcesses(Settings settings) {
        // The answer depends on the transport and its settings, not on the pair: a stand-in peer asks the question.
        // It shares this process's GPU, as the processes of a one-GPU launch do: a link that carries atomics (ibgda's
        // emulated NIC needs one across processes).
        io.gda4j.transport.RemotePeer any = new io.gda4j.transport.RemotePeer(1, 0, 1 << 20, true, true, "a peer");
        List<String> names = new ArrayList<>();
        for (TransportProvider p : Transports.providers(settings)) {
            if (p.unavailableAcrossProcesses(null, any).isEmpty()) {
                names.add(p.name());
            }
        }
        return String.join(",", names);
    }

    /** Checks a transport name against auto and the providers on the class path; returns it in lower case. */
    static String checkTransport(String name) {
        try {
            return Transports.checkName(name);
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage(), e);
        }
    }

    static WorldOptions parse(CommandLine cmd) {
        return parse(cmd, System.getenv());
    }

    /** Parses with {@code environment} standing for the process's (a launcher's variables make a process world). */
    static WorldOptions parse(CommandLine cmd, Map<String, String> environment) {
        WorldConfig env = WorldConfig.resolve();
        LaunchEnvironment launch;
        try {
            launch = Worlds.launchOf(environment).orElse(null);
        } catch (BootstrapException e) {
            throw new UsageException(e.getMessage(), e);
        }
        String transport = checkTransport(cmd.getOptionValue("transport", env.transport()));
        List<Integer> gpus;
        if (cmd.hasOption("gpus")) {
            String text = cmd.getOptionValue("gpus");
            OptionValues.list("gpus", text, true); // the common list rule first: no empty element
            try {
                gpus = WorldConfig.parseGpus(text);
            } catch (IllegalArgumentException e) {
                throw new UsageException("--gpus: " + e.getMessage(), e);
            }
        } else if (launch != null) {
            gpus = env.gpus(); // empty: each process takes its local rank's GPU (ProcessWorld)
        } else {
            gpus = env.gpus().isEmpty() ? List.of(0, 1) : env.gpus();
        }
        if (launch == null && gpus.size() < 2) {
            throw new UsageException("a two-rank benchmark needs at least two ranks: list two GPUs, e.g. --gpus 0,1");
        }
        int rank = OptionValues.integer(cmd, "rank", 0, 0, Integer.MAX_VALUE);
        int peer = OptionValues.integer(cmd, "peer", 1, 0, Integer.MAX_VALUE);
        for (int r : new int[] {rank, peer}) {
            if (launch != null && r >= launch.worldSize()) {
                throw new UsageException("rank " + r + " out of range: the launcher started " + launch.worldSize()
                        + " processes, ranks 0.." + (launch.worldSize() - 1));
            }
            if (launch == null && r >= gpus.size()) {
                throw new UsageException("rank " + r + " out of range: GPUs " + join(gpus) + " make ranks 0.."
                        + (gpus.size() - 1));
            }
        }
        if (rank == peer) {
            throw new UsageException("--rank and --peer must differ (both are " + rank + ")");
        }
        long timeoutMs = timeoutMillis(cmd, env);
        if (cmd.hasOption("csv") && cmd.hasOption("json")) {
            throw new UsageException("choose one of --csv and --json");
        }
        ResultTable.Format format = cmd.hasOption("csv") ? ResultTable.Format.CSV
                : cmd.hasOption("json") ? ResultTable.Format.JSON : ResultTable.Format.TABLE;
        NicChoice nic = null;
        if (cmd.hasOption("nic")) {
            try {
                nic = NicChoice.parse(cmd.getOptionValue("nic"));
            } catch (IllegalArgumentException e) {
                throw new UsageException(e.getMessage(), e);
            }
        }
        ProxyConfig.Handler proxyHandler = null;
        if (cmd.hasOption("proxy-handler")) {
            try {
                proxyHandler = ProxyConfig.Handler.parse(cmd.getOptionValue("proxy-handler"));
            } catch (IllegalArgumentException e) {
                throw new UsageException("--proxy-handler: " + e.getMessage(), e);
            }
            // The transport whose setting the option is: a choice of another one would never use it.
            String owner = ownerOf(ProxyConfig.HANDLER);
            if (!transport.equals(owner) && !transport.equals(Transports.AUTO)) {
                throw new UsageException("--proxy-handler chooses how the " + owner + " transport moves data, but"
                        + " --transport is " + transport + ": add --transport " + owner);
            }
        }
        return new WorldOptions(transport, gpus, rank, peer, Duration.ofMillis(timeoutMs), format, nic, launch,
                proxyHandler);
    }

    /** The name of the transport that reads {@code setting}. */
    private static String ownerOf(io.gda4j.config.Setting<?> setting) {
        for (TransportProvider p : Transports.providers(Settings.ofProcess())) {
            if (p.settings().contains(setting)) {
                return p.name();
            }
        }
        throw new IllegalStateException("no transport on the class path reads " + setting.envName());
    }

    /**
     * The settings the world of these options hands its transports: this process's, with {@code --nic} and
     * {@code --proxy-handler} on top (values travel with the world, never through {@code System.setProperty}).
     */
    Settings settings() {
        Settings s = Settings.ofProcess();
        if (nic != null) {
            s = s.with(NicConfig.NIC, nic.word());
        }
        if (proxyHandler != null) {
            s = s.with(ProxyConfig.HANDLER, proxyHandler.label());
        }
        return s;
    }

    /** The same options with another transport (compare opens one world per transport). */
    WorldOptions withTransport(String other) {
        return new WorldOptions(other, gpus, rank, peer, timeout, format, nic, launch, proxyHandler);
    }

    /** Ranks of the world these options open: the launched processes under a launcher, else one per listed GPU. */
    int worldSize() {
        return launch != null ? launch.worldSize() : gpus.size();
    }

    /**
     * Opens the world of this process: a {@link ProcessWorld} (this process's rank only) when a launcher started it,
     * else a {@link LocalWorld} of the listed GPUs; a setup failure is a usage error (exit 2) with its reason.
     */
    World openWorld(long heapBytes) {
        return openWorld(heapBytes, transport);
    }

    /** {@link #openWorld(long)} with {@code transportName} instead of the parsed one (compare runs several). */
    World openWorld(long heapBytes, String transportName) {
        CudaStatus status = Cuda.status();
        if (!status.available()) {
            throw new UsageException("this command needs a CUDA GPU: " + status.reason() + " (gda4j info shows what is missing)");
        }
        long rounded = (heapBytes + (1 << 20) - 1) & -(1L << 20);
        try {
            WorldConfig config = WorldConfig.resolve(settings()).toBuilder().gpus(gpus).transport(transportName)
                    .waitTimeout(timeout).heapSizeBytes(rounded).build();
            return launch != null ? ProcessWorld.create(config, launch) : LocalWorld.create(config);
        } catch (WorldSetupException e) {
            throw new UsageException(e.getMessage(), e);
        }
    }

    /** {@code --timeout-ms}, in the range of the setting it overrides, else that setting ({@code config}). */
    static long timeoutMillis(CommandLine cmd, WorldConfig config) {
        return OptionValues.integer(cmd, "timeout-ms", (int) config.waitTimeout().toMillis(), 1,
                (int) WorldConfig.MAX_WAIT_TIMEOUT_MILLIS);
    }

    static String join(List<Integer> xs) {
        StringBuilder b = new StringBuilder();
        for (int x : xs) {
            b.append(b.length() == 0 ? "" : ",").append(x);
        }
        return b.toString();
    }
}
