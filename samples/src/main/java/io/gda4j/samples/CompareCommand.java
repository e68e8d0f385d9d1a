package io.gda4j.samples;

import io.gda4j.transport.Capability;
import io.gda4j.world.ByteSize;
import io.gda4j.world.Scope;
import io.gda4j.world.World;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Option;
import org.apache.commons.cli.Options;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code gda4j compare}: one sweep of sizes, run over several transports in one process (a world per transport, one
 * after the other), printed side by side with ratios, optionally drawn as a PNG chart.
 */
final class CompareCommand implements Command {
    static final long MAX_BYTES = 1L << 30;
    /** Appended to a transport's column names when its figures come from the emulated NIC. */
    static final String EMULATED_SUFFIX = "-emulated";
    /** Latency bytes budget per size (round trips x size), so the big sizes take seconds, not minutes. */
    static final long LATENCY_BYTES_BUDGET = 2L << 30;
    static final int MIN_LATENCY_ITERS = 20;

    @Override
    public String name() {
        return "compare";
    }

    @Override
    public String summary() {
        return "the same latency and bandwidth sweep over several transports, side by side, with an optional chart";
    }

    @Override
    public String description() {
        return "For each transport of --transports (default: every transport here, p2p first) the command builds a world, runs the put_signal "
                + "ping-pong of 'gda4j latency' (scope --scope, median round trip) and the put bandwidth of 'gda4j "
                + "bandwidth' (each transport in its own kernel shape: a grid of blocks storing for p2p, one block "
                + "pushing one trigger per copy for proxy, one block posting one WQE per copy for ibgda) for every size, "
                + "then closes it. Columns of ibgda through the emulated NIC are named ibgda-emulated. The table puts the "
                + "transports side by side, with ratios against the first transport and against cuMemcpyPeerAsync "
                + "(measured once, in the first world), and per size the path that won (fastest_rtt; fastest_GBps, where "
                + "memcpyPeer competes too). --plot draws round trip and bandwidth versus size into a PNG; "
                + "--from redraws and reprints a CSV written by --csv, without a GPU.";
    }

    @Override
    public String examples() {
        return "  gda4j compare                                   every transport here side by side, 8 B .. 256 MiB\n"
                + "  gda4j compare --plot compare.png                the same, and a chart\n"
                + "  gda4j compare --sizes 8:64k --what latency --iters 5000\n"
                + "  gda4j compare --csv > compare.csv; gda4j compare --from compare.csv --plot compare.png\n";
    }

    @Override
    public Options options() {
        Options o = new Options();
        WorldOptions.addPairOptions(o);
        o.addOption(Option.builder().longOpt("transports").hasArg().argName("LIST")
                .desc("transports to compare, the first is the baseline of the ratios: " + WorldOptions.transportNames()
                        + " (default: all of them)").build());
        o.addOption(Option.builder().longOpt("sizes").hasArg().argName("SIZES")
                .desc("a list 8,4k,1m or a doubling range 8:256m (default 8:256m)").build());
        o.addOption(Option.builder().longOpt("what").hasArg().argName("LIST")
                .desc("latency, bandwidth or both (default both)").build());
        o.addOption(Option.builder().longOpt("scope").hasArg().argName("SCOPE")
                .desc("who moves the data in the ping-pong: thread, warp or block (default block)").build());
        o.addOption(Option.builder().longOpt("iters").hasArg().argName("N")
                .desc("round trips per size, fewer for large sizes (default 1000)").build());
        o.addOption(Option.builder().longOpt("warmup").hasArg().argName("N").desc("unmeasured round trips (default 100)").build());
        o.addOption(Option.builder().longOpt("block-threads").hasArg().argName("N")
                .desc("threads of the block scope in the ping-pong (default 256; the bandwidth kernel uses blocks of 512)").build());
        o.addOption(Option.builder().longOpt("reps").hasArg().argName("N")
                .desc("bandwidth measurements per size; the median is reported (default 3)").build());
        o.addOption(Option.builder().longOpt("plot").hasArg().argName("FILE")
                .desc("also draw the results as a PNG into exactly this file, checked for writing before the run"
                        + " starts (needs a JDK with java.desktop)").build());
        o.addOption(Option.builder().longOpt("from").hasArg().argName("FILE.csv")
                .desc("no measuring: print and plot the CSV an earlier 'compare --csv' wrote").build());
        o.addOption(Option.builder().longOpt("quiet").desc("no progress lines on stderr").build());
        return o;
    }

    /** The options that mean something with --from; the others would be ignored, so they are refused. */
    static final List<String> FROM_OPTIONS = List.of("from", "plot", "csv", "json", "quiet");

    @Override
    public int run(CommandLine cmd, PrintStream out, PrintStream err) throws IOException {
        Path plot = cmd.hasOption("plot") ? Path.of(cmd.getOptionValue("plot")) : null;
        if (plot != null) {
            ComparePlot.checkWritable(plot); // before any measuring: a bad path must not cost a sweep
        }
        if (cmd.hasOption("from")) {
            for (Option o : cmd.getOptions()) {
                if (!FROM_OPTIONS.contains(o.getLongOpt())) {
                    throw new UsageException("--from redraws a CSV and measures nothing, so --" + o.getLongOpt()
                            + " does not apply; with --from: --" + String.join(", --", FROM_OPTIONS));
                }
            }
            CompareResults r = CompareResults.readCsv(Path.of(cmd.getOptionValue("from")));
            ResultTable.Format format = formatOf(cmd);
            r.table().print(out, format);
            if (plot != null) {
                ComparePlot.write(r, plot);
                err.println("chart written to " + plot);
            }
            return 0;
        }
        WorldOptions w = WorldOptions.parse(cmd);
        List<String> transports = new ArrayList<>();
        // A launched process compares what connects processes (ibgda only over the emulated NIC).
        String defaults = w.launch != null ? WorldOptions.transportNamesAcrossProcesses(w.settings())
                : defaultTransports();
        for (String t : OptionValues.list("transports", cmd.getOptionValue("transports", defaults), false)) {
            transports.add(WorldOptions.checkTransport(t));
        }
        List<Long> sizeList = SizeList.parse(cmd.getOptionValue("sizes", "8:256m"), 1, MAX_BYTES);
        boolean latency = false;
        boolean bandwidth = false;
        for (String what : OptionValues.list("what", cmd.getOptionValue("what", "latency,bandwidth"), false)) {
            switch (what.toLowerCase(Locale.ROOT)) {
                case "latency":
                    latency = true;
                    break;
                case "bandwidth":
                    bandwidth = true;
                    break;
                default:
                    throw new UsageException("--what takes latency, bandwidth or both, got '" + what + "'");
            }
        }
        Scope scope;
        try {
            scope = Scope.parse(cmd.getOptionValue("scope", "block"));
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage(), e);
        }
        int iters = OptionValues.integer(cmd, "iters", 1000, 1, 1_000_000);
        int warmup = OptionValues.integer(cmd, "warmup", 100, 0, 1_000_000);
        int blockThreads = OptionValues.integer(cmd, "block-threads", 256, 32, 1024);
        int reps = OptionValues.integer(cmd, "reps", 3, 1, 100);
        if (blockThreads % 32 != 0) {
            throw new UsageException("--block-threads must be a multiple of 32 in 32..1024, got " + blockThreads);
        }
        long[] sizes = sizeList.stream().mapToLong(Long::longValue).toArray();
        long maxBytes = sizes[sizes.length - 1];
        CompareResults results = new CompareResults(transports, sizes);
        int steps = transports.size() * sizes.length * ((latency ? 1 : 0) + (bandwidth ? 1 : 0));
        // Under a launcher only the measuring rank's process (one rank per process) reports; the others answer.
        boolean measuring = w.launch == null || w.launch.rank() == w.rank;
        Progress progress = new Progress(err, steps, cmd.hasOption("quiet") || !measuring);
        for (int t = 0; t < transports.size(); t++) {
            String name = transports.get(t);
            try (World world = w.openWorld(PingPong.heapBytes(maxBytes) + PutBandwidth.heapBytes(maxBytes), name)) {
                boolean indirect = !world.transport(w.rank, w.peer).has(Capability.DIRECT);
                String emulated = Describe.engineStats(world, w.rank) != null ? EMULATED_SUFFIX : "";
                // Figures through the emulated NIC say so in the column names too, so CSV output (no notes) keeps it.
                results.relabel(t, name + emulated);
                results.notes.add(name + emulated + ": " + Describe.pair(world, w.rank, w.peer)
                        + (emulated.isEmpty() ? "" : " (emulated NIC: a software model that runs the WQEs with CUDA"
                        + " copies; not a network)"));
                if (latency) {
                    try (PingPong pp = new PingPong(world, w.rank, w.peer, maxBytes, iters)) {
                        for (int i = 0; i < sizes.length; i++) {
                            progress.step(name + " latency " + ByteSize.format(sizes[i]));
                            int n = latencyIterations(iters, sizes[i]);
                            int wu = (int) Math.min(warmup, Math.max(5, (long) warmup * n / iters));
                            LatencyStats s = pp.run(PingPong.Mode.PUT_SIGNAL, sizes[i], scope, blockThreads, wu, n);
                            if (s != null) {
                                results.rttMicros[t][i] = s.medianMicros();
                            }
                        }
                    }
                }
                if (bandwidth && !measuring) {
                    // The sender measures; this process meets it after every size, as gda4j bandwidth does.
                    for (int i = 0; i < sizes.length; i++) {
                        world.barrier();
                    }
                } else if (bandwidth) {
                    try (PutBandwidth bw = new PutBandwidth(world, w.rank, w.peer, maxBytes)) {
                        int blocks = indirect ? 1 : 2 * world.rank(w.rank).device().multiprocessorCount();
                        for (int i = 0; i < sizes.length; i++) {
                            progress.step(name + " bandwidth " + ByteSize.format(sizes[i]));
                            int n = PutBandwidth.iterationsFor(sizes[i]);
                            results.gbps[t][i] = bw.put(sizes[i], blocks, 512,
                                    PutBandwidth.defaultChunk(indirect, sizes[i], blocks), n, reps);
                            if (t == 0) {
                                results.memcpyPeerGbps[i] = bw.copyEngine(sizes[i], n, reps);
                            }
                            world.barrier();
                        }
                    }
                }
            }
        }
        if (!measuring) {
            return 0;
        }
        progress.done();
        results.notes.add("latency: put_signal " + scope.label() + " scope, median of up to " + iters
                + " round trips (timed on the GPU); bandwidth: median of " + reps + " event-timed runs of ~1 GiB");
        results.table().print(out, w.format);
        if (plot != null) {
            ComparePlot.write(results, plot);
            err.println("chart written to " + plot);
        }
        return 0;
    }

    /** Every transport on the class path, in auto-preference order (p2p first: the baseline of the ratios). */
    static String defaultTransports() {
        return WorldOptions.transportNames().replace(" ", "");
    }

    static int latencyIterations(int iters, long bytes) {
        if (bytes * (long) iters <= LATENCY_BYTES_BUDGET) {
            return iters;
        }
        return (int) Math.min(iters, Math.max(MIN_LATENCY_ITERS, LATENCY_BYTES_BUDGET / bytes));
    }

    private static ResultTable.Format formatOf(CommandLine cmd) {
        if (cmd.hasOption("csv") && cmd.hasOption("json")) {
            throw new UsageException("choose one of --csv and --json");
        }
        return cmd.hasOption("csv") ? ResultTable.Format.CSV : cmd.hasOption("json") ? ResultTable.Format.JSON
                : ResultTable.Format.TABLE;
    }
}
