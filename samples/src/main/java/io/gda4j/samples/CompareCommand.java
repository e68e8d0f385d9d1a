package io.gda4j.samples;

import io.gda4j.nic.emulated.EngineStats;
import io.gda4j.transport.TransportProvider;
import io.gda4j.world.ByteSize;
import io.gda4j.world.LocalWorld;
import io.gda4j.world.Scope;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Option;
import org.apache.commons.cli.Options;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code gda4j compare}: the same measurements over several transports, side by side: round trips (signal,
 * put_signal of 8 bytes, put_inline) and put bandwidth over sizes. Each transport gets a world of its own, opened
 * and closed in turn; a transport that cannot connect the pair gets a column of "-" and a note saying why.
 */
final class CompareCommand implements Command {
    @Override
    public String name() {
        return "compare";
    }

    @Override
    public String summary() {
        return "round trips and bandwidth over several transports side by side (p2p, ibgda, proxy)";
    }

    @Override
    public String description() {
        return "For each transport (--transports, default every one on the class path) opens a world on the same "
                + "GPUs, measures the median ping-pong round trip of a bare signal, of an 8-byte put_signal (thread "
                + "scope) and of put_inline, and the one-directional put bandwidth for each size, then prints one "
                + "row per measurement and one column per transport. ibgda columns run on the NIC --nic selects; "
                + "on the emulated NIC they are labelled 'ibgda (emulated NIC)' and measure a software model, not a "
                + "network. The emulated NIC's engine time per WQE is reported as a row of its own.";
    }

    @Override
    public String examples() {
        return "  gda4j compare                                  p2p vs ibgda (vs proxy) on GPUs 0,1\n"
                + "  gda4j compare --transports p2p,ibgda --nic emulated --sizes 4k,1m,256m\n";
    }

    @Override
    public Options options() {
        Options o = new Options();
        WorldOptions.addTo(o);
        o.addOption(Option.builder().longOpt("transports").hasArg().argName("LIST")
                .desc("transports to compare, comma-separated (default: every one on the class path)").build());
        o.addOption(Option.builder().longOpt("sizes").hasArg().argName("SIZES")
                .desc("bandwidth sizes (default 4k,64k,1m,16m,256m)").build());
        o.addOption(Option.builder().longOpt("iters").hasArg().argName("N")
                .desc("round trips per latency case (default 2000)").build());
        o.addOption(Option.builder().longOpt("reps").hasArg().argName("N")
                .desc("bandwidth measurements per size; the median is reported (default 3)").build());
        o.addOption(Option.builder().longOpt("quiet").desc("no progress lines on stderr").build());
        return o;
    }

    @Override
    public int run(CommandLine cmd, PrintStream out, PrintStream err) {
        WorldOptions w = WorldOptions.parse(cmd);
        List<String> transports = new ArrayList<>();
        List<String> known = new ArrayList<>();
        for (TransportProvider p : LocalWorld.providers()) {
            known.add(p.name());
        }
        for (String t : cmd.getOptionValue("transports", String.join(",", known)).split(",")) {
            String name = t.trim().toLowerCase(Locale.ROOT);
            if (!known.contains(name)) {
                throw new UsageException("unknown transport '" + t + "': choose from " + String.join(", ", known));
            }
            if (!transports.contains(name)) {
                transports.add(name);
            }
        }
        List<Long> sizes = SizeList.parse(cmd.getOptionValue("sizes", "4k,64k,1m,16m,256m"), 16,
                BandwidthCommand.MAX_BYTES);
        int iters = WorldOptions.intOption(cmd, "iters", 2000);
        int reps = WorldOptions.intOption(cmd, "reps", 3);
        if (iters <= 0 || reps <= 0) {
            throw new UsageException("--iters and --reps must be positive");
        }
        long maxBytes = sizes.get(sizes.size() - 1);
        List<String> rows = new ArrayList<>(List.of("signal RT median_us", "put_signal 8 B RT median_us",
                "put_inline RT median_us"));
        for (long size : sizes) {
            rows.add("put " + ByteSize.format(size) + " GBps");
        }
        rows.add("emulated NIC engine us/WQE");
        Map<String, Map<String, Object>> columns = new LinkedHashMap<>();
        List<String> notes = new ArrayList<>();
        Progress progress = new Progress(err, transports.size(), cmd.hasOption("quiet"));
        for (String transport : transports) {
            progress.step(transport);
            Map<String, Object> cells = new LinkedHashMap<>();
            String label = transport;
            WorldOptions forced = w.withTransport(transport);
            try (LocalWorld world = forced.open(Math.max(PutBandwidth.heapBytes(maxBytes), PingPong.heapBytes(16)));
                 PingPong pp = new PingPong(world, w.rank, w.peer, 16, iters);
                 PutBandwidth bw = new PutBandwidth(world, w.rank, w.peer, maxBytes)) {
                EngineStats before = Describe.engineStats(world, w.rank);
                if (before != null) {
                    label = transport + " (emulated NIC)";
                }
                int warmup = Math.max(10, iters / 10);
                cells.put(rows.get(0), pp.run(PingPong.Mode.SIGNAL, 0, Scope.THREAD, 32, warmup, iters)
                        .medianNanos() / 1e3);
                cells.put(rows.get(1), pp.run(PingPong.Mode.PUT_SIGNAL, 8, Scope.THREAD, 32, warmup, iters)
                        .medianNanos() / 1e3);
                cells.put(rows.get(2), pp.run(PingPong.Mode.PUT_INLINE, PingPong.INLINE_BYTES, Scope.THREAD, 32,
                        warmup, iters).medianNanos() / 1e3);
                boolean ibgda = world.transport(w.rank, w.peer) == io.gda4j.transport.TransportTag.IBGDA;
                int blocks = ibgda ? 1 : 2 * world.rank(w.rank).device().multiprocessorCount();
                for (int i = 0; i < sizes.size(); i++) {
                    long size = sizes.get(i);
                    long chunk = ibgda ? size : PutBandwidth.chunkFor(size, blocks);
                    cells.put(rows.get(3 + i), bw.put(size, blocks, 512, chunk, PutBandwidth.iterationsFor(size),
                            reps));
                }
                if (before != null) {
                    cells.put(rows.get(rows.size() - 1),
                            Describe.engineStats(world, w.rank).since(before).nanosPerWqe() / 1e3);
                }
                notes.add(label + ": " + Describe.pair(world, w.rank, w.peer));
            } catch (UsageException | IllegalStateException e) {
                notes.add(transport + ": not measured: " + e.getMessage());
            }
            columns.put(label, cells);
        }
        progress.done();
        List<String> header = new ArrayList<>();
        header.add("measurement");
        header.addAll(columns.keySet());
        ResultTable table = new ResultTable("compare: " + String.join(" vs ", columns.keySet()), header);
        for (String row : rows) {
            List<Object> cells = new ArrayList<>();
            cells.add(row);
            for (Map<String, Object> c : columns.values()) {
                cells.add(c.getOrDefault(row, "-"));
            }
            table.add(cells.toArray());
        }
        notes.forEach(table::note);
        table.print(out, w.format);
        return 0;
    }
}
