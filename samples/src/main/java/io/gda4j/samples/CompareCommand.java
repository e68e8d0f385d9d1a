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
        o.addOption(Option.builder().longOpt("what").hasArg().argName("WHAT")
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
                .desc("also draw the results into exactly this file, in the format its name ends in (.png, .jpg or"
                        + " .bmp), checked for writing before the run starts (needs a JDK with java.desktop)").build());
        o.addOption(Option.builder().longOpt("from").hasArg().argName("FILE.csv")
                .desc("no measuring: print and plot the CSV an earlier 'compare --csv' wrote (its run header"
                        + " included; a regular file of at most 1 MiB)").build());
        PayloadCheck.addOptions(o);
        Expectations.addOption(o, "proxy/p2p_rtt<=4");
        o.addOption(Option.builder().longOpt("quiet").desc("no progress lines on stderr").build());
        return o;
    }

    /** The options that mean something with --from; the others would be ignored, so they are refused. */
    static final List<String> FROM_OPTIONS = List.of("from", "plot", "csv", "json", "quiet", "expect");
    /** The options only the latency sweep reads, and the one only the bandwidth sweep reads. */
    static final List<String> LATENCY_OPTIONS = List.of("scope", "iters", "warmup", "block-threads");
    static final List<String> BANDWIDTH_OPTIONS = List.of("reps");

    @Override
    public int run(CommandLine cmd, PrintStream out, PrintStream err) throws IOException {
        Path plot = cmd.hasOption("plot") ? Path.of(cmd.getOptionValue("plot")) : null;
        Path from = cmd.hasOption("from") ? Path.of(cmd.getOptionValue("from")) : null;
        if (plot != null) {
            ComparePlot.checkWritable(plot, from); // before any measuring: a bad path must not cost a sweep
        }
        if (from != null) {
            for (Option o : cmd.getOptions()) {
                if (!FROM_OPTIONS.contains(o.getLongOpt())) {
                    throw new UsageException("--from redraws a CSV and measures nothing, so --" + o.getLongOpt()
                            + " does not apply; with --from: --" + String.join(", --", FROM_OPTIONS));
                }
            }
            ResultTable.Format format = formatOf(cmd);
            CompareResults r = CompareResults.readCsv(from);
            Expectations expect = Expectations.of(cmd, figures(r.transports));
            int code = Expectations.report(r.table(), format, expect, row -> String.valueOf(row.get(0)), out, err);
            if (plot != null) {
                ComparePlot.write(r, plot, from);
                err.println("chart written to " + plot);
            }
            return code;
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
        String what = cmd.getOptionValue("what", "both").strip().toLowerCase(Locale.ROOT);
        boolean latency = what.equals("latency") || what.equals("both");
        boolean bandwidth = what.equals("bandwidth") || what.equals("both");
        if (!latency && !bandwidth) {
            throw new UsageException("--what takes latency, bandwidth or both, got '" + cmd.getOptionValue("what") + "'");
        }
        for (String o : latency ? BANDWIDTH_OPTIONS : LATENCY_OPTIONS) {
            if (!(latency && bandwidth) && cmd.hasOption(o)) {
                throw new UsageException("--" + o + " applies to the " + (latency ? "bandwidth" : "latency")
                        + " sweep, which --what " + what + " leaves out");
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
        if (cmd.hasOption("block-threads") && scope != Scope.BLOCK) {
            throw new UsageException("--block-threads sets the block scope's threads, but --scope is " + scope.label());
        }
        boolean check = PayloadCheck.enabled(cmd);
        // The columns get an -emulated suffix once the worlds say which NIC ran: both spellings may be expected.
        List<String> expectable = new ArrayList<>(figures(transports));
        if (transports.contains("ibgda")) {
            List<String> emulated = new ArrayList<>(transports);
            emulated.replaceAll(t -> t.equals("ibgda") ? "ibgda" + EMULATED_SUFFIX : t);
            expectable.addAll(figures(emulated));
        }
        Expectations expect = Expectations.of(cmd, expectable);
        long[] sizes = sizeList.stream().mapToLong(Long::longValue).toArray();
        long maxBytes = sizes[sizes.length - 1];
        CompareResults results = new CompareResults(transports, sizes);
        int steps = transports.size() * sizes.length * ((latency ? 1 : 0) + (bandwidth ? 1 : 0));
        // Under a launcher only the measuring rank's process (one rank per process) reports; the others answer.
        boolean measuring = w.launch == null || w.launch.rank() == w.rank;
        Progress progress = new Progress(err, steps, cmd.hasOption("quiet") || !measuring);
        RunHeader header = RunHeader.of("compare");
        List<String> unchecked = new ArrayList<>();
        for (int t = 0; t < transports.size(); t++) {
            String name = transports.get(t);
            try (World world = w.openWorld(PingPong.heapBytes(maxBytes) + PutBandwidth.heapBytes(maxBytes), name)) {
                boolean indirect = !world.transport(w.rank, w.peer).has(Capability.DIRECT);
                String emulated = Describe.engineStats(world, w.rank) != null ? EMULATED_SUFFIX : "";
                // Figures through the emulated NIC say so in the column names too, so a CSV's data keeps it.
                results.relabel(t, name + emulated);
                if (t == 0) {
                    header.putWorld(world, w.rank, w.peer);
                }
                header.put("pair_" + (name + emulated).replace('-', '_'), Describe.pair(world, w.rank, w.peer));
                results.notes.add(name + emulated + ": " + Describe.pair(world, w.rank, w.peer)
                        + (emulated.isEmpty() ? "" : " (emulated NIC: a software model that runs the WQEs with CUDA"
                        + " copies; not a network)"));
                if (latency) {
                    try (PingPong pp = new PingPong(world, w.rank, w.peer, maxBytes, iters)) {
                        for (int i = 0; i < sizes.length; i++) {
                            progress.step(name + " latency " + ByteSize.format(sizes[i]));
                            int n = latencyIterations(iters, sizes[i]);
                            int wu = (int) Math.min(warmup, Math.max(5, (long) warmup * n / iters));
                            LatencyStats s = pp.run(PingPong.Mode.PUT_SIGNAL, sizes[i], scope, blockThreads, wu, n,
                                    check);
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
                    String uncheckable = PutBandwidth.uncheckableReason(world, w.rank, w.peer);
                    if (check && uncheckable != null) {
                        unchecked.add(name + emulated + " bandwidth (" + uncheckable + ")");
                    }
                    try (PutBandwidth bw = new PutBandwidth(world, w.rank, w.peer, maxBytes)) {
                        int blocks = indirect ? 1 : 2 * world.rank(w.rank).device().multiprocessorCount();
                        for (int i = 0; i < sizes.length; i++) {
                            progress.step(name + " bandwidth " + ByteSize.format(sizes[i]));
                            int n = PutBandwidth.iterationsFor(sizes[i]);
                            results.gbps[t][i] = bw.put(sizes[i], blocks, 512,
                                    PutBandwidth.defaultChunk(indirect, sizes[i], blocks), n, reps,
                                    check && uncheckable == null);
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
        String run = (latency ? "latency: put_signal " + scope.label() + " scope"
                + (scope == Scope.BLOCK ? " of " + blockThreads + " threads" : "") + ", median of up to " + iters
                + " round trips after up to " + warmup + " unmeasured (timed on the GPU)" : "")
                + (latency && bandwidth ? "; " : "")
                + (bandwidth ? "bandwidth: median of " + reps + " event-timed runs of ~1 GiB" : "");
        header.put("sizes", ByteSize.format(sizes[0]) + " .. " + ByteSize.format(maxBytes) + " (" + sizes.length
                + " sizes)");
        header.put("scope", scope.label());
        header.put("iterations", iters + " round trips per size (fewer for large sizes), " + reps
                + " bandwidth runs per size");
        header.put("warmup", warmup + " round trips; one untimed bandwidth launch per size");
        header.put("check", !check ? "off" : "on: every payload compared by its receiver, outside the timed region"
                + (unchecked.isEmpty() ? "" : "; not run for " + String.join(", ", unchecked)));
        header.put("run", run);
        results.header = header;
        results.notes.add(run);
        // The table first: a chart that cannot be written must not cost the figures.
        int code = Expectations.report(results.table(), w.format, expect, row -> String.valueOf(row.get(0)), out, err);
        if (plot != null) {
            ComparePlot.write(results, plot, null);
            err.println("chart written to " + plot);
        }
        return code;
    }

    /** The numbers of a compare table of {@code transports}: every column but size, bytes and the winners. */
    static List<String> figures(List<String> transports) {
        List<String> f = new ArrayList<>(CompareResults.columns(transports));
        f.removeAll(List.of("size", "bytes", "fastest_rtt", "fastest_GBps"));
        return f;
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
