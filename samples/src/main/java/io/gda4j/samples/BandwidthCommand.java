package io.gda4j.samples;

import io.gda4j.transport.Capability;
import io.gda4j.transport.Transport;
import io.gda4j.world.ByteSize;
import io.gda4j.world.World;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Option;
import org.apache.commons.cli.Options;

import java.io.PrintStream;
import java.util.List;

/** {@code gda4j bandwidth}: one-directional put bandwidth over a size sweep, beside cuMemcpyPeerAsync. */
final class BandwidthCommand implements Command {
    static final long MAX_BYTES = 4L << 30;

    @Override
    public String name() {
        return "bandwidth";
    }

    @Override
    public String summary() {
        return "one-directional put bandwidth over sizes, with cuMemcpyPeerAsync as the reference";
    }

    @Override
    public String description() {
        return "A grid of blocks on rank R copies SIZE bytes into peer P's heap with the device API's put_block, each "
                + "block taking a slice; the same run times cuMemcpyPeerAsync between the same buffers (the copy "
                + "engines: the reference line). Each figure is the median of --reps event-timed measurements of about "
                + "1 GiB each. GB/s are 10^9 bytes per second; 'ratio' is put / memcpyPeer. Over --transport proxy "
                + "the copy engine is the proxy's data mover, so the kernel takes another shape: one block pushes one "
                + "PUT trigger per copy (--chunk defaults to the whole size) and ends with a flush, so the timing "
                + "covers the copies; small sizes then measure the proxy's per-trigger cost. put_Mmsg_s is the message rate: "
                + "puts of SIZE per second, in millions. --bidir also times both directions at once (each rank puts to "
                + "the other; bidir_GBps is the sum). With --check (the default) each measurement sends a payload of "
                + "its own, which is read back from the peer and compared between the timed launches: a payload that "
                + "differs fails the run (exit 1). --expect checks thresholds and prints one verdict line (exit 3 when "
                + "one is missed).";
    }

    @Override
    public String examples() {
        return "  gda4j bandwidth                             4 KiB .. 256 MiB on GPUs 0,1\n"
                + "  gda4j bandwidth --sizes 256m --reps 11      one size, more repetitions\n"
                + "  gda4j bandwidth --blocks 264 --threads 512 --json\n"
                + "  gda4j bandwidth --transport proxy --sizes 4k:256m\n"
                + "  torchrun --no-python --nproc-per-node 2 ./gda4j bandwidth\n"
                + "                                              one process per GPU; rank 0 prints\n";
    }

    @Override
    public Options options() {
        Options o = new Options();
        WorldOptions.addTo(o);
        WorldOptions.addProxyHandlerOption(o);
        o.addOption(Option.builder().longOpt("sizes").hasArg().argName("SIZES")
                .desc("a list 4k,1m or a doubling range 4k:256m (default 4k:256m)").build());
        o.addOption(Option.builder().longOpt("blocks").hasArg().argName("N")
                .desc("blocks of the put kernel (default: 2 per multiprocessor; 1 for ibgda)").build());
        o.addOption(Option.builder().longOpt("threads").hasArg().argName("N")
                .desc("threads per block, multiple of 32 up to 1024 (default 512)").build());
        o.addOption(Option.builder().longOpt("chunk").hasArg().argName("SIZE")
                .desc("bytes a block moves before taking the next chunk, dealt round-robin (default: SIZE / blocks, "
                        + "at least 1 KiB and at most 64 KiB)").build());
        o.addOption(Option.builder().longOpt("reps").hasArg().argName("N")
                .desc("measurements per size; the median is reported (default 5)").build());
        o.addOption(Option.builder().longOpt("iters").hasArg().argName("N")
                .desc("copies per measurement (default: enough for about 1 GiB)").build());
        o.addOption(Option.builder().longOpt("bidir").desc("also both directions at once: each rank puts to the other,"
                + " bidir_GBps is the sum (both ranks in this process)").build());
        PayloadCheck.addOptions(o);
        Expectations.addOption(o, "put_GBps>=300");
        o.addOption(Option.builder().longOpt("quiet").desc("no progress lines on stderr").build());
        return o;
    }

    /** The figures of the table, what {@code --expect} may name. */
    static final List<String> FIGURES = List.of("put_GBps", "memcpyPeer_GBps", "ratio", "put_Mmsg_s", "bidir_GBps");

    /** What the options ask for, every combination checked before a world is opened. */
    private record Plan(List<Long> sizes, int threads, int reps, int fixedIters, int blocks, long fixedChunk,
                        boolean bidir, boolean check, Expectations expect) {
    }

    private static Plan plan(CommandLine cmd, WorldOptions w) {
        List<Long> sizes = SizeList.parse(cmd.getOptionValue("sizes", "4k:256m"), 16, MAX_BYTES);
        int threads = OptionValues.integer(cmd, "threads", 512, 32, 1024);
        int reps = OptionValues.integer(cmd, "reps", 5, 1, 1000);
        int fixedIters = OptionValues.integer(cmd, "iters", 0, 1, 100_000_000); // absent (0): enough for ~1 GiB
        int blocks = OptionValues.integer(cmd, "blocks", 0, 1, 65_535); // absent (0): by transport and GPU
        if (threads % 32 != 0) {
            throw new UsageException("--threads must be a multiple of 32 in 32..1024, got " + threads);
        }
        long fixedChunk = 0;
        try {
            if (cmd.hasOption("chunk")) {
                fixedChunk = ByteSize.parse(cmd.getOptionValue("chunk"));
            }
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage(), e);
        }
        if (cmd.hasOption("chunk") && (fixedChunk < 16 || fixedChunk % 16 != 0)) {
            throw new UsageException("--chunk must be a positive multiple of 16 bytes");
        }
        boolean bidir = cmd.hasOption("bidir");
        if (bidir && w.launch != null) {
            throw new UsageException("--bidir times both ranks' kernels in one process, but a launcher started this"
                    + " one as one rank of " + w.launch.worldSize() + ": run it without the launcher (--gpus 0,1)");
        }
        Expectations expect = Expectations.of(cmd, FIGURES);
        if (expect != null && !bidir && expect.names("bidir_GBps")) {
            throw new UsageException("--expect names bidir_GBps, which only --bidir measures: add --bidir");
        }
        return new Plan(sizes, threads, reps, fixedIters, blocks, fixedChunk, bidir, PayloadCheck.enabled(cmd),
                expect);
    }

    @Override
    public int run(CommandLine cmd, PrintStream out, PrintStream err) {
        WorldOptions w = WorldOptions.parse(cmd);
        Plan plan = plan(cmd, w);
        List<Long> sizes = plan.sizes();
        long maxBytes = sizes.get(sizes.size() - 1);
        Progress progress = new Progress(err, sizes.size(), cmd.hasOption("quiet"));
        ResultTable table;
        try (World world = w.openWorld(PutBandwidth.heapBytes(maxBytes))) {
            if (world.localRank(w.rank).isEmpty()) {
                // Another process sends; this one keeps its heap mapped and meets the sender after every size, so
                // no host wait (the close barrier included) spans the whole sweep.
                for (int i = 0; i < sizes.size(); i++) {
                    world.barrier();
                }
                return 0;
            }
            String uncheckable = PutBandwidth.uncheckableReason(world, w.rank, w.peer);
            if (uncheckable != null && cmd.hasOption("check")) {
                throw new UsageException("--check: " + uncheckable + "; run without --check");
            }
            boolean check = plan.check() && uncheckable == null;
            table = table(world, w, plan, check, uncheckable);
            try (PutBandwidth bw = new PutBandwidth(world, w.rank, w.peer, maxBytes);
                 PutBandwidth back = plan.bidir() ? bw.reverse() : null) {
                measure(world, w, bw, back, plan, check, progress, table);
            } catch (PayloadCheck.MismatchException e) {
                table.note("stopped: " + e.getMessage());
                table.print(out, w.format); // the sizes measured before the failure are not lost
                throw e;
            }
        }
        return Expectations.report(table, w.format, plan.expect(), row -> String.valueOf(row.get(0)), out, err);
    }

    private static ResultTable table(World world, WorldOptions w, Plan plan, boolean check, String uncheckable) {
        List<String> columns = new java.util.ArrayList<>(List.of("size", "bytes", "put_GBps", "memcpyPeer_GBps",
                "ratio", "put_Mmsg_s"));
        if (plan.bidir()) {
            columns.add("bidir_GBps");
        }
        if (Describe.engineStats(world, w.rank) != null) {
            columns.addAll(List.of("wqes", "engine_us_per_wqe", "nic"));
        }
        ResultTable table = new ResultTable("bandwidth: one-directional, GB/s (10^9 B/s), median of " + plan.reps()
                + "; put_Mmsg_s: puts of SIZE per second, millions" + (plan.bidir() ? "; bidir_GBps: both directions at"
                + " once, the sum" : ""), columns);
        RunHeader h = RunHeader.of("bandwidth", world, w.rank, w.peer);
        h.put("sizes", ByteSize.format(plan.sizes().get(0)) + " .. " + ByteSize.format(plan.sizes().get(
                plan.sizes().size() - 1)) + " (" + plan.sizes().size() + " sizes)");
        h.put("iterations", (plan.fixedIters() > 0 ? plan.fixedIters() + " copies" : "copies of about 1 GiB in all")
                + " per measurement, " + plan.reps() + " measurements per size");
        h.put("warmup", "one untimed launch per size");
        h.put("check", check ? "on: a payload per measurement, read back from the peer and compared, outside the"
                + " events" : uncheckable != null ? "not run: " + uncheckable : "off");
        h.put("timing", "CUDA events around each launch; the median of the measurements");
        table.header(h);
        return table;
    }

    private static void measure(World world, WorldOptions w, PutBandwidth bw, PutBandwidth back, Plan plan,
                                boolean check, Progress progress, ResultTable table) {
        // Proxy and IBGDA: put_block hands each chunk to one thread, which pushes one trigger or posts one WQE, so
        // the defaults are one block and one trigger or WQE per put (chunk = size): the copy engine or the NIC, not
        // the kernel, moves the bytes.
        Transport transport = world.transport(w.rank, w.peer);
        boolean indirect = !transport.has(Capability.DIRECT);
        io.gda4j.nic.emulated.EngineStats engine = Describe.engineStats(world, w.rank);
        int blocks = plan.blocks() > 0 ? plan.blocks() : indirect ? 1
                : 2 * world.rank(w.rank).device().multiprocessorCount();
        table.header().put("kernel", blocks + " blocks x " + plan.threads() + " threads");
        for (long size : plan.sizes()) {
            progress.step(ByteSize.format(size));
            int iters = plan.fixedIters() > 0 ? plan.fixedIters() : PutBandwidth.iterationsFor(size);
            long chunk = plan.fixedChunk() > 0 ? plan.fixedChunk() : PutBandwidth.defaultChunk(indirect, size, blocks);
            io.gda4j.nic.emulated.EngineStats before = Describe.engineStats(world, w.rank);
            double put = bw.put(size, blocks, plan.threads(), chunk, iters, plan.reps(), check);
            double ce = bw.copyEngine(size, iters, plan.reps());
            double bidir = back == null ? Double.NaN
                    : bw.bidirectional(back, size, blocks, plan.threads(), chunk, iters, plan.reps());
            world.barrier(); // the receiving process, if another, waits here rather than at close
            List<Object> row = new java.util.ArrayList<>(List.of(ByteSize.format(size), size, put, ce, put / ce,
                    put * 1e3 / size));
            if (back != null) {
                row.add(bidir);
            }
            if (before != null) {
                io.gda4j.nic.emulated.EngineStats run = Describe.engineStats(world, w.rank).since(before);
                row.addAll(List.of(run.wqes(), run.nanosPerWqe() / 1e3, "emulated NIC"));
            }
            table.add(row.toArray());
        }
        progress.done();
        table.note(Describe.pair(world, w.rank, w.peer) + "; put kernel " + blocks + " x " + plan.threads()
                + " threads, " + (plan.fixedChunk() > 0 ? ByteSize.format(plan.fixedChunk())
                : indirect ? "one put per chunk (chunk = size), handed to " + transport.phrase()
                + " and completed by quiet at kernel end" : "size/blocks (1..64 KiB)") + " chunks");
        if (engine != null) {
            table.note(Describe.engineNote(Describe.engineStats(world, w.rank).since(engine)));
        }
        if (world.localRank(w.peer).isEmpty()) {
            table.note("memcpyPeer_GBps: cuMemcpyDtoDAsync into the peer's heap as mapped here by CUDA IPC (the peer's"
                    + " context lives in its own process)");
        }
    }
}
