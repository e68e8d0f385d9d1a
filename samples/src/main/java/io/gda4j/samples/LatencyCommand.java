package io.gda4j.samples;

import io.gda4j.transport.Capability;
import io.gda4j.transport.Transport;
import io.gda4j.world.ByteSize;
import io.gda4j.world.Scope;
import io.gda4j.world.World;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Option;
import org.apache.commons.cli.Options;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * {@code gda4j latency}: device-timed ping-pong round trips, bare signal and put_signal over a size sweep; over the
 * proxy transport also the trigger FIFO alone ({@code --mode fifo}).
 */
final class LatencyCommand implements Command {
    static final long MAX_BYTES = 1L << 30;
    /** Above this many bytes per round trip the iteration count shrinks so each size takes about the same time. */
    static final long BYTES_BUDGET = 256L << 20;
    static final String FIFO_MODE = "fifo";
    static final int FIFO_PIPELINED_RUNS = 5;

    @Override
    public String name() {
        return "latency";
    }

    @Override
    public String summary() {
        return "ping-pong round trips between two ranks: signal, and put_signal over sizes";
    }

    @Override
    public String description() {
        return "Rank R sends round i to peer P and waits for P's echo; P waits and echoes. Every round trip is timed on "
                + "the GPU (%globaltimer), so launch and host overheads are not in the numbers. Modes: 'signal' sends a "
                + "bare 64-bit signal (relaxed: orders nothing); 'put_signal' sends SIZE bytes then a signal released "
                + "after them (over p2p a system-scope fence, most of a small put_signal's round trip), the data moved "
                + "by one thread, one warp or one block (--scopes); 'put_inline' carries 8 "
                + "bytes inside a 16-byte slot that holds the round number in each half (no fence at all: the fastest "
                + "small message). Reported: min, median, mean, standard deviation, p99, p99.9 and max of the round trip in "
                + "microseconds (an HdrHistogram of every round trip), and half_rtt_us, half the median: the one-way "
                + "figure perftest prints. With --check (the default) every put_signal payload is a pattern of its own "
                + "per round and sender, and the receiver compares it, outside the initiator's timer: a payload that "
                + "differs fails the run (exit 1). --expect checks thresholds and prints one verdict line (exit 3 when "
                + "one is missed). Large sizes "
                + "run fewer iterations (the iters column says how many). Over --transport proxy every send is a "
                + "16-byte trigger to a host thread that moves the data with the copy engine; put_inline needs direct "
                + "stores and is left out, and 'fifo' measures the trigger FIFO alone: fifo_rtt is one GPU thread "
                + "pushing a trigger and waiting until the proxy has popped it, fifo_pipelined is the cost per trigger "
                + "when it pushes back to back (min/median/max over 5 runs). Those push a trigger as a signal, flush or "
                + "atomic does (a relaxed store); fifo_rtt_put and fifo_pipelined_put push it as a put does, released "
                + "at system scope so that the copy engine sees the data written before it (a system fence more).";
    }

    @Override
    public String examples() {
        return "  gda4j latency                               all modes, scopes and sizes 8 B .. 1 MiB on GPUs 0,1\n"
                + "  gda4j latency --mode signal --iters 100000   the bare signal, many samples\n"
                + "  gda4j latency --mode put_signal --sizes 8,4k,64k --scopes warp --csv\n"
                + "  gda4j latency --mode put_inline              8 bytes without a fence\n"
                + "  gda4j latency --transport proxy --mode put_signal --sizes 8 --scopes thread\n"
                + "  gda4j latency --transport proxy --mode fifo  the trigger FIFO round trip alone\n"
                + "  torchrun --no-python --nproc-per-node 2 ./gda4j latency\n"
                + "                                              one process per GPU (mpirun and srun alike; rank 0\n"
                + "                                              prints; see README, Many processes)\n";
    }

    /** The figures of the table, what {@code --expect} may name. */
    static final List<String> FIGURES = figures();

    private static List<String> figures() {
        List<String> f = new ArrayList<>(LatencyStats.COLUMNS);
        f.add(HALF_RTT_COLUMN);
        return List.copyOf(f);
    }

    /** perftest's one-way latency: half the median round trip, named so that no one takes it for a measured one. */
    static final String HALF_RTT_COLUMN = "half_rtt_us";

    @Override
    public Options options() {
        Options o = new Options();
        WorldOptions.addTo(o);
        WorldOptions.addProxyHandlerOption(o);
        o.addOption(Option.builder().longOpt("mode").hasArg().argName("LIST")
                .desc("signal, put_signal, put_inline, fifo (proxy only), comma-separated (default: signal, "
                        + "put_signal, put_inline; over proxy signal, put_signal)").build());
        o.addOption(Option.builder().longOpt("sizes").hasArg().argName("SIZES")
                .desc("put_signal sizes: a list 8,64,4k or a doubling range 8:1m (default 8:1m)").build());
        o.addOption(Option.builder().longOpt("scopes").hasArg().argName("LIST")
                .desc("who moves the data: thread, warp, block (default all three)").build());
        o.addOption(Option.builder().longOpt("iters").hasArg().argName("N").desc("measured round trips per case (default 10000)").build());
        o.addOption(Option.builder().longOpt("warmup").hasArg().argName("N").desc("unmeasured round trips first (default 1000)").build());
        o.addOption(Option.builder().longOpt("block-threads").hasArg().argName("N")
                .desc("threads of the block scope, a multiple of 32 (default 256), at most what the kernel's registers "
                        + "allow: 384 for put_signal on an H100, the command says where it is fewer").build());
        PayloadCheck.addOptions(o);
        Expectations.addOption(o, "median_us<=3.5,p99_us<=5");
        o.addOption(Option.builder().longOpt("quiet").desc("no progress lines on stderr").build());
        return o;
    }

    /** What the options ask for, every combination checked before a world is opened. */
    private record Plan(List<PingPong.Mode> modes, boolean fifo, List<Long> sizes, List<Scope> scopes, int iters,
                        int warmup, int blockThreads, boolean check, Expectations expect) {
    }

    static Plan plan(CommandLine cmd, WorldOptions w) {
        List<PingPong.Mode> modes = new ArrayList<>();
        boolean fifo = false;
        for (String m : OptionValues.list("mode", cmd.getOptionValue("mode", "signal,put_signal,put_inline"), false)) {
            if (m.equalsIgnoreCase(FIFO_MODE)) {
                fifo = true;
                continue;
            }
            modes.add(PingPong.Mode.parse(m));
        }
        List<Long> sizes = SizeList.parse(cmd.getOptionValue("sizes", "8:1m"), 1, MAX_BYTES);
        List<Scope> scopes = new ArrayList<>();
        for (String s : OptionValues.list("scopes", cmd.getOptionValue("scopes", "thread,warp,block"), false)) {
            try {
                scopes.add(Scope.parse(s));
            } catch (IllegalArgumentException e) {
                throw new UsageException(e.getMessage(), e);
            }
        }
        int iters = OptionValues.integer(cmd, "iters", 10_000, 1, 10_000_000);
        int warmup = OptionValues.integer(cmd, "warmup", 1_000, 0, 10_000_000);
        int blockThreads = OptionValues.integer(cmd, "block-threads", 256, 32, 1024);
        if (blockThreads % 32 != 0) {
            throw new UsageException("--block-threads must be a multiple of 32 in 32..1024, got " + blockThreads);
        }
        boolean check = PayloadCheck.enabled(cmd);
        Optional<Transport> named = Transport.ofLabel(w.transport); // empty for auto: the world's pair decides
        if (fifo && named.isPresent() && !named.get().has(Capability.PREFERS_FEW_PUTS)) {
            throw new UsageException("--mode fifo measures the proxy's trigger FIFO, but --transport is " + w.transport
                    + ": add --transport proxy");
        }
        if (named.isPresent() && !named.get().has(Capability.PUT_INLINE) && modes.contains(PingPong.Mode.PUT_INLINE)
                && cmd.hasOption("mode")) {
            throw new UsageException("put_inline needs direct stores into the peer's memory and does not run over "
                    + named.get().phrase() + ": use put_signal");
        }
        boolean putSignal = modes.contains(PingPong.Mode.PUT_SIGNAL);
        for (String only : new String[] {"sizes", "scopes", "block-threads", "check"}) {
            if (!putSignal && cmd.hasOption(only)) {
                throw new UsageException("--" + only + " applies to put_signal, which --mode leaves out: add put_signal"
                        + " to --mode or drop --" + only);
            }
        }
        if (cmd.hasOption("block-threads") && !scopes.contains(Scope.BLOCK)) {
            throw new UsageException("--block-threads sets the block scope's threads, which --scopes leaves out: add"
                    + " block to --scopes or drop --block-threads");
        }
        return new Plan(modes, fifo, sizes, scopes, iters, warmup, blockThreads, check && putSignal,
                Expectations.of(cmd, FIGURES));
    }

    @Override
    public int run(CommandLine cmd, PrintStream out, PrintStream err) {
        WorldOptions w = WorldOptions.parse(cmd);
        Plan plan = plan(cmd, w);
        List<PingPong.Mode> modes = new ArrayList<>(plan.modes());
        long maxBytes = modes.contains(PingPong.Mode.PUT_SIGNAL) ? plan.sizes().get(plan.sizes().size() - 1) : 16;

        ResultTable table;
        boolean measuring;
        try (World world = w.openWorld(PingPong.heapBytes(maxBytes))) {
            measuring = world.localRank(w.rank).isPresent();
            // Emulated NIC figures carry the label in every row too, so a CSV says it in its data as well.
            List<String> columns = new ArrayList<>(List.of("mode", "scope", "size", "bytes", "iters"));
            columns.addAll(FIGURES);
            if (Describe.engineStats(world, w.rank) != null) {
                columns.add("nic");
            }
            table = new ResultTable("latency: ping-pong round trip, microseconds (" + HALF_RTT_COLUMN + " = median / 2:"
                    + " the one-way figure perftest reports, half the round trip, not a one-way measurement)", columns);
            table.header(header(world, w, plan));
            Transport transport = world.transport(w.rank, w.peer);
            // The FIFO is what a put costs where each put is a host call: the proxy's trigger FIFO.
            if (plan.fifo() && !transport.has(Capability.PREFERS_FEW_PUTS)) {
                throw new UsageException("--mode fifo measures the proxy's trigger FIFO, but rank " + w.rank + " reaches rank "
                        + w.peer + " over " + transport.label() + ": add --transport proxy");
            }
            if (!transport.has(Capability.PUT_INLINE) && modes.contains(PingPong.Mode.PUT_INLINE)) {
                modes.remove(PingPong.Mode.PUT_INLINE);
                table.note("put_inline left out: it needs direct stores (a " + Capability.DIRECT + " transport), which "
                        + transport.phrase() + " does not offer");
            }
            // In a multi-process world only the measuring rank's process reports; its peers answer silently.
            try {
                run(world, w, modes, plan, maxBytes, table, cmd.hasOption("quiet") || !measuring, err);
            } catch (PayloadCheck.MismatchException e) {
                if (measuring) {
                    table.note("stopped: " + e.getMessage());
                    table.print(out, w.format); // the rows measured before the failure are not lost
                }
                throw e;
            }
        }
        if (!measuring) {
            return 0;
        }
        return Expectations.report(table, w.format, plan.expect(), row -> row.get(0) + " " + row.get(1) + " "
                + row.get(2), out, err);
    }

    private static RunHeader header(World world, WorldOptions w, Plan plan) {
        RunHeader h = RunHeader.of("latency", world, w.rank, w.peer);
        List<String> modes = new ArrayList<>();
        plan.modes().forEach(m -> modes.add(m.label));
        if (plan.fifo()) {
            modes.add(FIFO_MODE);
        }
        h.put("modes", String.join(",", modes));
        if (plan.modes().contains(PingPong.Mode.PUT_SIGNAL)) {
            List<String> scopes = new ArrayList<>();
            plan.scopes().forEach(s -> scopes.add(s.label()));
            h.put("scopes", String.join(",", scopes));
            h.put("block_threads", plan.blockThreads());
            h.put("sizes", ByteSize.format(plan.sizes().get(0)) + " .. " + ByteSize.format(plan.sizes().get(
                    plan.sizes().size() - 1)) + " (" + plan.sizes().size() + " sizes)");
        }
        h.put("iterations", plan.iters() + " round trips per case (fewer above " + ByteSize.format(BYTES_BUDGET)
                + " per round trip x iterations: the iters column)");
        h.put("warmup", plan.warmup() + " round trips first, unmeasured");
        h.put("check", plan.check() ? "on: every put_signal payload compared by its receiver, outside the timer"
                : "off");
        h.put("timing", "each round trip on the GPU (%globaltimer); statistics from an HdrHistogram (3 digits)");
        return h;
    }

    private static void run(World world, WorldOptions w, List<PingPong.Mode> modes, Plan plan, long maxBytes,
                            ResultTable table, boolean quiet, PrintStream err) {
        List<Object[]> cases = new ArrayList<>();
        for (PingPong.Mode mode : modes) {
            if (mode == PingPong.Mode.PUT_SIGNAL) {
                for (Scope scope : plan.scopes()) {
                    for (long size : plan.sizes()) {
                        cases.add(new Object[] {mode, scope, size});
                    }
                }
            } else {
                cases.add(new Object[] {mode, Scope.THREAD, mode == PingPong.Mode.PUT_INLINE ? PingPong.INLINE_BYTES : 0L});
            }
        }
        int iters = plan.iters();
        int warmup = plan.warmup();
        Progress progress = new Progress(err, cases.size() + (plan.fifo() ? 4 : 0), quiet);
        try (PingPong pp = new PingPong(world, w.rank, w.peer, maxBytes, iters)) {
            io.gda4j.nic.emulated.EngineStats engineBefore = Describe.engineStats(world, w.rank);
            for (Object[] c : cases) {
                PingPong.Mode mode = (PingPong.Mode) c[0];
                Scope scope = (Scope) c[1];
                long bytes = (Long) c[2];
                boolean scoped = mode == PingPong.Mode.PUT_SIGNAL;
                int n = scaledIterations(iters, bytes);
                int wu = (int) Math.min(warmup, Math.max(10, (long) warmup * n / iters));
                progress.step(mode.label + (scoped ? " " + scope.label() + " " + ByteSize.format(bytes) : ""));
                LatencyStats s = pp.run(mode, bytes, scope, plan.blockThreads(), wu, n, plan.check());
                if (s == null) {
                    continue; // another process measures
                }
                List<Object> row = new ArrayList<>(List.of(mode.label, scoped ? scope.label() : "thread",
                        bytes == 0 ? "-" : ByteSize.format(bytes), bytes, n));
                row.addAll(List.of(s.micros()));
                row.add(s.medianNanos() / 2e3);
                if (engineBefore != null) {
                    row.add("emulated NIC");
                }
                table.add(row.toArray());
            }
            // The FIFO figures involve the measuring rank and its proxy thread only, not the peer's process.
            if (plan.fifo() && world.localRank(w.rank).isPresent()) {
                try (FifoRoundTrip f = new FifoRoundTrip(world, w.rank, w.peer, iters)) {
                    for (boolean release : new boolean[] {false, true}) {
                        String suffix = release ? "_put" : "";
                        progress.step("fifo round trip" + (release ? ", released" : ""));
                        LatencyStats s = f.roundTrips(warmup, iters, release);
                        List<Object> row = new ArrayList<>(List.of("fifo_rtt" + suffix, "thread", "-", 0L, iters));
                        row.addAll(List.of(s.micros()));
                        row.add(Double.NaN); // push to seen-popped: no one-way half
                        table.add(row.toArray());
                        progress.step("fifo pipelined" + (release ? ", released" : ""));
                        double[] p = f.pipelinedNanos(warmup, iters, FIFO_PIPELINED_RUNS, release);
                        double mean = Arrays.stream(p).average().orElse(Double.NaN);
                        double var = Arrays.stream(p).map(x -> (x - mean) * (x - mean)).sum() / p.length;
                        // Five runs' per-trigger costs: no percentiles of five.
                        table.add("fifo_pipelined" + suffix, "thread", "-", 0L, iters, p[0] / 1e3,
                                p[p.length / 2] / 1e3, mean / 1e3, Math.sqrt(var) / 1e3, Double.NaN, Double.NaN,
                                p[p.length - 1] / 1e3, Double.NaN);
                    }
                }
            }
            progress.done();
            table.note(Describe.pair(world, w.rank, w.peer) + "; timed on the GPU with %globaltimer");
            if (plan.fifo()) {
                table.note("fifo_pipelined rows: min, median, mean, stdev and max of " + FIFO_PIPELINED_RUNS
                        + " runs' cost per trigger (no percentiles of five)");
            }
            if (engineBefore != null) {
                table.note(Describe.engineNote(Describe.engineStats(world, w.rank).since(engineBefore)));
            }
        }
    }

    static int scaledIterations(int iters, long bytes) {
        if (bytes == 0 || bytes * (long) iters <= BYTES_BUDGET) {
            return iters;
        }
        return (int) Math.min(iters, Math.max(200, BYTES_BUDGET / bytes));
    }
}
