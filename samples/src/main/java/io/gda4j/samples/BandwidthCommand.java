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
                + "covers the copies; small sizes then measure the proxy's per-trigger cost.";
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
        o.addOption(Option.builder().longOpt("quiet").desc("no progress lines on stderr").build());
        return o;
    }

    @Override
    public int run(CommandLine cmd, PrintStream out, PrintStream err) {
        WorldOptions w = WorldOptions.parse(cmd);
        List<Long> sizes = SizeList.parse(cmd.getOptionValue("sizes", "4k:256m"), 16, MAX_BYTES);
        int threads = OptionValues.integer(cmd, "threads", 512, 32, 1024);
        int reps = OptionValues.integer(cmd, "reps", 5, 1, 1000);
        int fixedIters = OptionValues.integer(cmd, "iters", 0, 1, 100_000_000); // absent (0): enough for ~1 GiB
        int blocksOpt = OptionValues.integer(cmd, "blocks", 0, 1, 65_535); // absent (0): by transport and GPU
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
            try (PutBandwidth bw = new PutBandwidth(world, w.rank, w.peer, maxBytes)) {
                table = measure(world, w, bw, sizes, blocksOpt, threads, fixedIters, fixedChunk, reps, progress);
            }
        }
        table.print(out, w.format);
        return 0;
    }

    private static ResultTable measure(World world, WorldOptions w, PutBandwidth bw, List<Long> sizes, int blocksOpt,
                                       int threads, int fixedIters, long fixedChunk, int reps, Progress progress) {
        // Proxy and IBGDA: put_block hands each chunk to one thread, which pushes one trigger or posts one WQE, so
        // the defaults are one block and one trigger or WQE per put (chunk = size): the copy engine or the NIC, not
        // the kernel, moves the bytes.
        Transport transport = world.transport(w.rank, w.peer);
        boolean indirect = !transport.has(Capability.DIRECT);
        io.gda4j.nic.emulated.EngineStats engine = Describe.engineStats(world, w.rank);
        List<String> columns = new java.util.ArrayList<>(List.of("size", "bytes", "put_GBps", "memcpyPeer_GBps",
                "ratio"));
        if (engine != null) {
            columns.addAll(List.of("wqes", "engine_us_per_wqe", "nic"));
        }
        ResultTable table = new ResultTable("bandwidth: one-directional, GB/s (10^9 B/s), median of " + reps, columns);
        int blocks = blocksOpt > 0 ? blocksOpt : indirect ? 1 : 2 * world.rank(w.rank).device().multiprocessorCount();
        for (long size : sizes) {
            progress.step(ByteSize.format(size));
            int iters = fixedIters > 0 ? fixedIters : PutBandwidth.iterationsFor(size);
            long chunk = fixedChunk > 0 ? fixedChunk : PutBandwidth.defaultChunk(indirect, size, blocks);
            io.gda4j.nic.emulated.EngineStats before = Describe.engineStats(world, w.rank);
            double put = bw.put(size, blocks, threads, chunk, iters, reps);
            double ce = bw.copyEngine(size, iters, reps);
            world.barrier(); // the receiving process, if another, waits here rather than at close
            if (before != null) {
                io.gda4j.nic.emulated.EngineStats run = Describe.engineStats(world, w.rank).since(before);
                table.add(ByteSize.format(size), size, put, ce, put / ce, run.wqes(), run.nanosPerWqe() / 1e3,
                        "emulated NIC");
            } else {
                table.add(ByteSize.format(size), size, put, ce, put / ce);
            }
        }
        progress.done();
        table.note(Describe.pair(world, w.rank, w.peer) + "; put kernel " + blocks + " x " + threads
                + " threads, " + (fixedChunk > 0 ? ByteSize.format(fixedChunk)
                : indirect ? "one put per chunk (chunk = size), handed to " + transport.phrase()
                + " and completed by quiet at kernel end" : "size/blocks (1..64 KiB)") + " chunks");
        if (engine != null) {
            table.note(Describe.engineNote(Describe.engineStats(world, w.rank).since(engine)));
        }
        if (world.localRank(w.peer).isEmpty()) {
            table.note("memcpyPeer_GBps: cuMemcpyDtoDAsync into the peer's heap as mapped here by CUDA IPC (the peer's"
                    + " context lives in its own process)");
        }
        return table;
    }
}
