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
import java.util.List;

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
                + "small message). Reported: min, median, p99 and max of the round trip in microseconds. Large sizes "
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
        o.addOption(Option.builder().longOpt("quiet").desc("no progress lines on stderr").build());
        return o;
    }

    @Override
    public int run(CommandLine cmd, PrintStream out, PrintStream err) {
        WorldOptions w = WorldOptions.parse(cmd);
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
        long maxBytes = modes.contains(PingPong.Mode.PUT_SIGNAL) ? sizes.get(sizes.size() - 1) : 16;

        ResultTable table;
        boolean measuring;
        try (World world = w.openWorld(PingPong.heapBytes(maxBytes))) {
            measuring = world.localRank(w.rank).isPresent();
            // Emulated NIC figures carry the label in every row too, so a CSV (which has no notes) says it.
            List<String> columns = new ArrayList<>(List.of("mode", "scope", "size", "bytes", "iters", "min_us",
                    "median_us", "p99_us", "max_us"));
            if (Describe.engineStats(world, w.rank) != null) {
                columns.add("nic");
            }
            table = new ResultTable("latency: ping-pong round trip, microseconds", columns);
            Transport transport = world.transport(w.rank, w.peer);
            // The FIFO is what a put costs where each put is a host call: the proxy's trigger FIFO.
            if (fifo && !transport.has(Capability.PREFERS_FEW_PUTS)) {
                throw new UsageException("--mode fifo measures the proxy's trigger FIFO, but rank " + w.rank + " reaches rank "
                        + w.peer + " over " + transport.label() + ": add --transport proxy");
            }
            if (!transport.has(Capability.PUT_INLINE) && modes.contains(PingPong.Mode.PUT_INLINE)) {
                if (cmd.hasOption("mode")) {
                    throw new UsageException("put_inline needs direct stores into the peer's memory and does not run over "
                            + transport.phrase() + ": use put_signal");
                }
                modes.remove(PingPong.Mode.PUT_INLINE);
                table.note("put_inline left out: it needs direct stores (a " + Capability.DIRECT + " transport), which "
                        + transport.phrase() + " does not offer");
            }
            // In a multi-process world only the measuring rank's process reports; its peers answer silently.
            run(world, w, modes, sizes, scopes, iters, warmup, blockThreads, maxBytes, fifo, table,
                    cmd.hasOption("quiet") || !measuring, err);
        }
        if (measuring) {
            table.print(out, w.format);
        }
        return 0;
    }

    private static void run(World world, WorldOptions w, List<PingPong.Mode> modes, List<Long> sizes,
                            List<Scope> scopes, int iters, int warmup, int blockThreads, long maxBytes, boolean fifo,
                            ResultTable table, boolean quiet, PrintStream err) {
        List<Object[]> cases = new ArrayList<>();
        for (PingPong.Mode mode : modes) {
            if (mode == PingPong.Mode.PUT_SIGNAL) {
                for (Scope scope : scopes) {
                    for (long size : sizes) {
                        cases.add(new Object[] {mode, scope, size});
                    }
                }
            } else {
                cases.add(new Object[] {mode, Scope.THREAD, mode == PingPong.Mode.PUT_INLINE ? PingPong.INLINE_BYTES : 0L});
            }
        }
        Progress progress = new Progress(err, cases.size() + (fifo ? 4 : 0), quiet);
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
                LatencyStats s = pp.run(mode, bytes, scope, blockThreads, wu, n);
                if (s == null) {
                    continue; // another process measures
                }
                Object[] row = {mode.label, scoped ? scope.label() : "thread", bytes == 0 ? "-" : ByteSize.format(bytes),
                    bytes, n, s.minNanos() / 1e3, s.medianNanos() / 1e3, s.p99Nanos() / 1e3, s.maxNanos() / 1e3,
                    "emulated NIC"};
                table.add(engineBefore != null ? row : java.util.Arrays.copyOf(row, row.length - 1));
            }
            // The FIFO figures involve the measuring rank and its proxy thread only, not the peer's process.
            if (fifo && world.localRank(w.rank).isPresent()) {
                try (FifoRoundTrip f = new FifoRoundTrip(world, w.rank, w.peer, iters)) {
                    for (boolean release : new boolean[] {false, true}) {
                        String suffix = release ? "_put" : "";
                        progress.step("fifo round trip" + (release ? ", released" : ""));
                        LatencyStats s = f.roundTrips(warmup, iters, release);
                        table.add("fifo_rtt" + suffix, "thread", "-", 0L, iters, s.minNanos() / 1e3,
                                s.medianNanos() / 1e3, s.p99Nanos() / 1e3, s.maxNanos() / 1e3);
                        progress.step("fifo pipelined" + (release ? ", released" : ""));
                        double[] p = f.pipelinedNanos(warmup, iters, FIFO_PIPELINED_RUNS, release);
                        table.add("fifo_pipelined" + suffix, "thread", "-", 0L, iters, p[0] / 1e3,
                                p[p.length / 2] / 1e3, p[p.length - 1] / 1e3, p[p.length - 1] / 1e3);
                    }
                }
            }
            progress.done();
            table.note(Describe.pair(world, w.rank, w.peer) + "; timed on the GPU with %globaltimer");
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
