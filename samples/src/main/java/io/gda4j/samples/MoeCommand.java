package io.gda4j.samples;

import io.gda4j.moe.ElementType;
import io.gda4j.moe.MoeBuffer;
import io.gda4j.moe.MoeConfig;
import io.gda4j.moe.MoeLowLatencyBuffer;
import io.gda4j.moe.MoeLowLatencyConfig;
import io.gda4j.moe.MoeLowLatencyNcclBaseline;
import io.gda4j.moe.MoeLowLatencyRouting;
import io.gda4j.moe.MoeLowLatencySelfCheck;
import io.gda4j.moe.MoeNcclBaseline;
import io.gda4j.moe.MoeRouting;
import io.gda4j.moe.MoeSelfCheck;
import io.gda4j.nccl.LibNccl;
import io.gda4j.nccl.NcclComms;
import io.gda4j.world.PeerCard;
import io.gda4j.world.ProcessWorld;
import io.gda4j.world.World;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Option;
import org.apache.commons.cli.Options;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** {@code gda4j moe}: expert-parallel dispatch and combine (io.gda4j.moe), timed per token count. */
final class MoeCommand implements Command {
    @Override
    public String name() {
        return "moe";
    }

    @Override
    public String summary() {
        return "MoE dispatch and combine: time and bandwidth per rank over a token sweep";
    }

    @Override
    public String description() {
        return "Every rank of the world dispatches TOKENS tokens of hidden size HIDDEN to top-K of EXPERTS experts "
                + "(uniformly routed; experts split evenly over the ranks), then combines them back, with io.gda4j.moe. "
                + "Each figure is over --iters timed pairs after --warmup: the median and p99 of the slowest rank's "
                + "time, measured with CUDA events from its dispatch (or combine) launch to its end. Bandwidth is "
                + "DeepEP's: the bytes a rank receives in dispatch (rows x hidden x element size, plus FP8 scales; "
                + "for combine the BF16 rows it sends back), including its own rows, divided by the time; GB/s are "
                + "10^9 bytes per second. --check first compares one dispatch and combine with the Java reference, "
                + "bit for bit. --comm-stream runs each rank's calls on a communication stream of its own "
                + "(MoeConfig.communicationStream): each call waits for the rank's stream through an event, and the "
                + "rank's stream waits for the call's event after it; the times then include that fork and join. "
                + "The nccl columns time NCCL's all-to-all-v of the same routing (grouped ncclSend/ncclRecv, "
                + "one communicator per rank, on the ranks' streams, the same events): dispatch moves each row's payload "
                + "and FP8 scales to every rank holding one of its experts, combine moves BF16 rows back; buffers are "
                + "packed beforehand and packing is not timed. x_nccl is NCCL's median time over gda4j's (above 1: "
                + "gda4j is faster). NCCL is loaded from " + LibNccl.LIBRARY_ENV + " or the usual places (a Python "
                + "environment's nvidia/nccl/lib); without it, or with ranks sharing a GPU, the columns say why. "
                + "--mode low-latency times the decoding calls instead (MoeLowLatencyBuffer: each token once per expert "
                + "into an expert-major buffer, FP8 cast on the fly by default, no host synchronisation): per token "
                + "count the median and p99 per call of dispatch and combine and of their send and receive halves "
                + "(made with the send/receive split; a receive half includes the wait for the slowest peer). Each "
                + "timed call is queued on every rank the process drives before any of it runs (behind a one-thread "
                + "kernel that waits, at most 250 ms, for a host word the benchmark raises afterwards), so the times "
                + "leave out the host's launches, which one process makes rank after rank; NCCL's columns are timed "
                + "without that gate. Tokens "
                + "default to 128, --dtype to fp8, --pow2-scales rounds FP8 scales up to powers of two (UE8M0). Its "
                + "nccl columns time NCCL's all-to-all-v of the same routing with one row per (token, expert), as the "
                + "low-latency dispatch moves them.";
    }

    @Override
    public String examples() {
        return "  gda4j moe                                   DeepEP's shape: 4096 tokens, hidden 7168, top-8 of 256, BF16 and FP8\n"
                + "  gda4j moe --tokens 128:8192 --dtype bf16    a sweep\n"
                + "  gda4j moe --gpus 0,0 --tokens 256 --check   a functional check on one GPU\n"
                + "  gda4j moe --mode low-latency --tokens 1:512  decoding: DeepEP's low-latency shape, a sweep\n";
    }

    @Override
    public Options options() {
        Options o = new Options();
        WorldOptions.addTo(o);
        o.addOption(Option.builder().longOpt("tokens").hasArg().argName("LIST")
                .desc("tokens per rank: a list 128,4096 or a doubling range 128:8192 (default 4096)").build());
        o.addOption(Option.builder().longOpt("hidden").hasArg().argName("N").desc("hidden size (default 7168)").build());
        o.addOption(Option.builder().longOpt("experts").hasArg().argName("N").desc("experts (default 256)").build());
        o.addOption(Option.builder().longOpt("topk").hasArg().argName("K").desc("experts per token (default 8)").build());
        o.addOption(Option.builder().longOpt("dtype").hasArg().argName("T")
                .desc("dispatch element type: bf16, fp8 or both (default both); combine is BF16").build());
        o.addOption(Option.builder().longOpt("channels").hasArg().argName("N")
                .desc("channels per rank, two thread blocks each (default 24, at most SMs / (2 x ranks per GPU))").build());
        o.addOption(Option.builder().longOpt("ring").hasArg().argName("ROWS").desc("ring rows per channel and peer (default 128)").build());
        o.addOption(Option.builder().longOpt("chunk").hasArg().argName("ROWS").desc("rows per announced chunk (default 32)").build());
        o.addOption(Option.builder().longOpt("iters").hasArg().argName("N").desc("timed iterations (default 20)").build());
        o.addOption(Option.builder().longOpt("warmup").hasArg().argName("N").desc("untimed iterations first (default 3)").build());
        o.addOption(Option.builder().longOpt("mode").hasArg().argName("M")
                .desc("high-throughput (default: dispatch/combine for large batches) or low-latency (decoding)").build());
        o.addOption(Option.builder().longOpt("pow2-scales")
                .desc("low-latency FP8: scales rounded up to powers of two (UE8M0)").build());
        o.addOption(Option.builder().longOpt("comm-stream")
                .desc("high-throughput: dispatch and combine on a communication stream per rank, ordered with the "
                        + "rank's stream by events (one more CUDA stream per rank)").build());
        o.addOption(Option.builder().longOpt("check").desc("compare with the Java reference first").build());
        o.addOption(Option.builder().longOpt("quiet").desc("no progress lines on stderr").build());
        return o;
    }

    static List<Integer> tokenList(String text) {
        List<Integer> list = new ArrayList<>();
        try {
            if (text.contains(":")) {
                String[] p = text.split(":");
                int from = Integer.parseInt(p[0].trim());
                int to = Integer.parseInt(p[1].trim());
                if (from <= 0 || to < from) {
                    throw new UsageException("--tokens range must be FROM:TO with 0 < FROM <= TO, got " + text);
                }
                for (long t = from; t <= to; t *= 2) {
                    list.add((int) t);
                }
            } else {
                for (String s : text.split(",")) {
                    int t = Integer.parseInt(s.trim());
                    if (t <= 0) {
                        throw new UsageException("--tokens must be positive, got " + t);
                    }
                    list.add(t);
                }
            }
        } catch (NumberFormatException e) {
            throw new UsageException("--tokens expects numbers like 4096, 128,256 or 128:8192; got '" + text + "'");
        }
        return list;
    }

    /** What the nccl column says when NCCL cannot run: the reason's first clause. */
    static String ncclColumn(String reason) {
        int cut = reason.indexOf(':');
        int paren = reason.indexOf(" (");
        int end = paren >= 0 && (cut < 0 || paren < cut) ? paren : cut;
        return end < 0 ? reason : reason.substring(0, end);
    }

    static double percentile(double[] v, double p) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[(int) Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
    }

    /** The --mode value: true for low-latency. */
    static boolean lowLatency(CommandLine cmd) {
        String mode = cmd.getOptionValue("mode", "high-throughput").trim().toLowerCase(java.util.Locale.ROOT);
        return switch (mode) {
            case "high-throughput" -> false;
            case "low-latency" -> true;
            default -> throw new UsageException("--mode must be high-throughput or low-latency, got " + mode);
        };
    }

    /** The low-latency configs the options ask for (one per dispatch type), checked before any world is opened. */
    static List<MoeLowLatencyConfig> lowLatencyConfigs(CommandLine cmd, int maxTokens) {
        String dtypeText = cmd.getOptionValue("dtype", "fp8").trim().toLowerCase(java.util.Locale.ROOT);
        List<ElementType> dtypes = switch (dtypeText) {
            case "bf16" -> List.of(ElementType.BF16);
            case "fp8" -> List.of(ElementType.FP8_E4M3);
            case "both" -> List.of(ElementType.BF16, ElementType.FP8_E4M3);
            default -> throw new UsageException("--dtype must be bf16, fp8 or both, got " + dtypeText);
        };
        boolean pow2 = cmd.hasOption("pow2-scales");
        if (pow2 && !dtypes.contains(ElementType.FP8_E4M3)) {
            throw new UsageException("--pow2-scales applies to FP8 dispatch: use --dtype fp8 or both");
        }
        List<MoeLowLatencyConfig> configs = new ArrayList<>();
        try {
            for (ElementType t : dtypes) {
                configs.add(MoeLowLatencyConfig.builder()
                        .hidden(OptionValues.integer(cmd, "hidden", 7168, 1, Integer.MAX_VALUE))
                        .maxTokensPerRank(maxTokens)
                        .numExperts(OptionValues.integer(cmd, "experts", 256, 1, Integer.MAX_VALUE))
                        .topK(OptionValues.integer(cmd, "topk", 8, 1, Integer.MAX_VALUE))
                        .dispatchType(t).powerOfTwoScales(pow2 && t == ElementType.FP8_E4M3).build());
            }
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage(), e);
        }
        return configs;
    }

    private int runLowLatency(CommandLine cmd, PrintStream out, PrintStream err) {
        if (cmd.hasOption("comm-stream")) {
            throw new UsageException("--comm-stream applies to --mode high-throughput; the low-latency calls run on the"
                    + " rank's stream");
        }
        List<Integer> tokens = tokenList(cmd.getOptionValue("tokens", "128"));
        int maxTokens = tokens.stream().mapToInt(Integer::intValue).max().orElse(1);
        List<MoeLowLatencyConfig> configs = lowLatencyConfigs(cmd, maxTokens);
        int iters = OptionValues.integer(cmd, "iters", 20, 1, 1_000_000);
        int warmup = OptionValues.integer(cmd, "warmup", 3, 0, 1_000_000);
        WorldOptions w = WorldOptions.parse(cmd);
        int ranks = w.worldSize();
        long heap = 0;
        for (MoeLowLatencyConfig c : configs) {
            try {
                heap += c.sizing(ranks).heapBytes() + (1 << 20);
            } catch (IllegalArgumentException e) {
                throw new UsageException(e.getMessage(), e);
            }
        }
        ResultTable table = new ResultTable("moe --mode low-latency: per call, the slowest rank, median and p99 of "
                + iters + " (ms)", List.of("dtype", "tokens", "dispatch_ms", "dispatch_p99_ms", "combine_ms",
                "combine_p99_ms", "dispatch_send_ms", "dispatch_recv_ms", "combine_send_ms", "combine_recv_ms",
                "nccl_dispatch_ms", "nccl_dispatch_p99_ms", "nccl_combine_ms", "nccl_combine_p99_ms"));
        boolean reporting;
        try (World world = w.openWorld(heap)) {
            // Under a launcher every process runs the same calls; rank 0's process reports.
            reporting = world.localRank(0).isPresent();
            Progress progress = new Progress(err, (tokens.size() + (cmd.hasOption("check") ? 1 : 0)) * configs.size(),
                    cmd.hasOption("quiet") || !reporting);
            String ncclMissing = MoeNcclBaseline.unavailableReason(world);
            List<MoeLowLatencyBuffer> buffers = new ArrayList<>();
            try {
                for (MoeLowLatencyConfig c : configs) {
                    buffers.add(MoeLowLatencyBuffer.create(world, c));
                }
                for (MoeLowLatencyBuffer ll : buffers) {
                    String name = ll.config().dispatchType().name() + (ll.config().powerOfTwoScales() ? "/UE8M0" : "");
                    try (MoeLowLatencySelfCheck run = new MoeLowLatencySelfCheck(ll);
                         MoeLowLatencyNcclBaseline nccl = ncclMissing == null ? new MoeLowLatencyNcclBaseline(ll) : null) {
                        if (cmd.hasOption("check")) {
                            progress.step("check " + name);
                            run.run(MoeLowLatencyRouting.Kind.SKEWED, 1,
                                    MoeSelfCheck.tokenCounts(ranks, maxTokens, new java.util.Random(1)), true);
                        }
                        for (int t : tokens) {
                            progress.step(name + " " + t + " tokens");
                            int[] perRank = new int[ranks];
                            Arrays.fill(perRank, t);
                            MoeLowLatencySelfCheck.Timing timing = run.time(MoeLowLatencyRouting.Kind.UNIFORM, 7, perRank,
                                    warmup, iters);
                            List<Object> row = new ArrayList<>(List.of(name, t, percentile(timing.dispatchMillis(), 0.5),
                                    percentile(timing.dispatchMillis(), 0.99), percentile(timing.combineMillis(), 0.5),
                                    percentile(timing.combineMillis(), 0.99),
                                    percentile(timing.dispatchSendMillis(), 0.5),
                                    percentile(timing.dispatchReceiveMillis(), 0.5),
                                    percentile(timing.combineSendMillis(), 0.5),
                                    percentile(timing.combineReceiveMillis(), 0.5)));
                            if (nccl != null) {
                                MoeNcclBaseline.Timing base = nccl.time(MoeLowLatencyRouting.Kind.UNIFORM, 7, perRank,
                                        warmup, iters);
                                row.addAll(List.of(percentile(base.dispatchMillis(), 0.5),
                                        percentile(base.dispatchMillis(), 0.99), percentile(base.combineMillis(), 0.5),
                                        percentile(base.combineMillis(), 0.99)));
                            } else {
                                row.addAll(List.of(ncclColumn(ncclMissing), "-", "-", "-"));
                            }
                            table.add(row.toArray());
                        }
                    }
                }
            } finally {
                for (MoeLowLatencyBuffer b : buffers) {
                    b.close();
                }
            }
            progress.done();
            if (reporting) {
                table.note(placement(world, w));
            }
            table.note("send/recv columns: medians of the halves made with the send/receive split");
            table.note(ncclMissing == null ? "nccl: NCCL " + NcclComms.version() + " from " + LibNccl.loadedFrom()
                    + ", all-to-all-v of the same routing, one row per (token, expert)" : "nccl: not run: " + ncclMissing);
        }
        if (reporting) {
            table.print(out, w.format);
        }
        return 0;
    }

    /** Where the ranks ran, for the table's note; says when ranks share a GPU (figures then are functional only). */
    private static String placement(World world, WorldOptions w) {
        String shared = "; ranks share a GPU: a functional check, not GPU-to-GPU figures";
        if (world instanceof ProcessWorld pw) {
            boolean sharing = false;
            for (PeerCard a : pw.cards()) {
                for (PeerCard b : pw.cards()) {
                    sharing |= a.rank() < b.rank() && a.sameGpu(b);
                }
            }
            return world.size() + " ranks, one process each (" + w.launch.launcher().word() + "), transport "
                    + world.transport(0, 1) + (sharing ? shared : "");
        }
        return world.size() + " ranks on GPUs " + WorldOptions.join(w.gpus) + ", transport " + world.transport(0, 1)
                + (w.gpus.stream().distinct().count() < w.gpus.size() ? shared : "");
    }

    @Override
    public int run(CommandLine cmd, PrintStream out, PrintStream err) {
        if (lowLatency(cmd)) {
            return runLowLatency(cmd, out, err);
        }
        WorldOptions w = WorldOptions.parse(cmd);
        List<Integer> tokens = tokenList(cmd.getOptionValue("tokens", "4096"));
        int maxTokens = tokens.stream().mapToInt(Integer::intValue).max().orElse(1);
        String dtypeText = cmd.getOptionValue("dtype", "both").trim().toLowerCase(java.util.Locale.ROOT);
        List<ElementType> dtypes = switch (dtypeText) {
            case "bf16" -> List.of(ElementType.BF16);
            case "fp8" -> List.of(ElementType.FP8_E4M3);
            case "both" -> List.of(ElementType.BF16, ElementType.FP8_E4M3);
            default -> throw new UsageException("--dtype must be bf16, fp8 or both, got " + dtypeText);
        };
        int iters = OptionValues.integer(cmd, "iters", 20, 1, 1_000_000);
        int warmup = OptionValues.integer(cmd, "warmup", 3, 0, 1_000_000);
        List<MoeConfig> configs = new ArrayList<>();
        int ring = OptionValues.integer(cmd, "ring", 128, 1, Integer.MAX_VALUE);
        try {
            for (ElementType t : dtypes) {
                configs.add(MoeConfig.builder().hidden(OptionValues.integer(cmd, "hidden", 7168, 1, Integer.MAX_VALUE)).dtype(t)
                        .maxTokensPerRank(maxTokens).numExperts(OptionValues.integer(cmd, "experts", 256, 1, Integer.MAX_VALUE))
                        .topK(OptionValues.integer(cmd, "topk", 8, 1, Integer.MAX_VALUE)).numChannels(OptionValues.integer(cmd, "channels", 24, 1, Integer.MAX_VALUE))
                        .ringTokens(ring).chunkTokens(OptionValues.integer(cmd, "chunk", 32, 1, Integer.MAX_VALUE))
                        .combineWarps(Math.min(MoeConfig.MAX_COMBINE_WARPS, ring))
                        .communicationStream(cmd.hasOption("comm-stream")).build());
            }
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage(), e);
        }
        int ranks = w.worldSize();
        long heap = 0;
        for (MoeConfig c : configs) {
            try {
                // the larger of the two layouts: whether the world is direct is known only once it exists
                heap += Math.max(c.sizing(ranks, false).heapBytes(), c.sizing(ranks, true).heapBytes()) + (1 << 20);
            } catch (IllegalArgumentException e) {
                throw new UsageException(e.getMessage(), e);
            }
        }
        ResultTable table = new ResultTable("moe: dispatch and combine per rank, median and p99 of " + iters
                + " (ms; GB/s = 10^9 B/s, DeepEP's definition)", List.of("dtype", "tokens", "dispatch_ms", "dispatch_p99_ms",
                "dispatch_GBps", "combine_ms", "combine_p99_ms", "combine_GBps", "nccl_dispatch_ms", "nccl_dispatch_p99_ms",
                "dispatch_x_nccl", "nccl_combine_ms", "nccl_combine_p99_ms", "combine_x_nccl"));
        boolean reporting;
        try (World world = w.openWorld(heap)) {
            // Under a launcher every process runs the same calls; rank 0's process reports.
            reporting = world.localRank(0).isPresent();
            Progress progress = new Progress(err, (tokens.size() + (cmd.hasOption("check") ? 1 : 0)) * configs.size(),
                    cmd.hasOption("quiet") || !reporting);
            List<MoeBuffer> buffers = new ArrayList<>();
            String ncclMissing = MoeNcclBaseline.unavailableReason(world);
            try {
                for (MoeConfig c : configs) {
                    buffers.add(MoeBuffer.create(world, c));
                }
                for (MoeBuffer moe : buffers) {
                    try (MoeSelfCheck run = new MoeSelfCheck(moe);
                         MoeNcclBaseline nccl = ncclMissing == null ? new MoeNcclBaseline(moe) : null) {
                        if (cmd.hasOption("check")) {
                            progress.step("check " + moe.config().dtype());
                            run.run(MoeRouting.Kind.UNIFORM, 1, MoeSelfCheck.tokenCounts(ranks, maxTokens, new java.util.Random(1)));
                        }
                        for (int t : tokens) {
                            progress.step(moe.config().dtype() + " " + t + " tokens");
                            int[] perRank = new int[ranks];
                            Arrays.fill(perRank, t);
                            MoeSelfCheck.Timing timing = run.time(MoeRouting.Kind.UNIFORM, 7, perRank, warmup, iters);
                            double dMed = percentile(timing.dispatchMillis(), 0.5);
                            double cMed = percentile(timing.combineMillis(), 0.5);
                            long bytes = Arrays.stream(timing.recvBytesPerRank()).max().orElse(0);
                            long combineBytes = bytes / moe.config().dtype().bytes() * 2;
                            List<Object> row = new ArrayList<>(List.of(moe.config().dtype().name(), t, dMed,
                                    percentile(timing.dispatchMillis(), 0.99), bytes / (dMed * 1e6), cMed,
                                    percentile(timing.combineMillis(), 0.99), combineBytes / (cMed * 1e6)));
                            if (nccl != null) {
                                MoeNcclBaseline.Timing base = nccl.time(MoeRouting.Kind.UNIFORM, 7, perRank, warmup, iters);
                                double nd = percentile(base.dispatchMillis(), 0.5);
                                double nc = percentile(base.combineMillis(), 0.5);
                                row.addAll(List.of(nd, percentile(base.dispatchMillis(), 0.99), nd / dMed, nc,
                                        percentile(base.combineMillis(), 0.99), nc / cMed));
                            } else {
                                row.addAll(List.of(ncclColumn(ncclMissing), "-", "-", "-", "-", "-"));
                            }
                            table.add(row.toArray());
                        }
                    }
                }
            } finally {
                for (MoeBuffer b : buffers) {
                    b.close();
                }
            }
            progress.done();
            if (reporting) {
                table.note(placement(world, w));
            }
            table.note("bandwidth: the slowest rank's received bytes (dispatch) or sent-back BF16 bytes (combine) / its time");
            if (cmd.hasOption("comm-stream")) {
                table.note("calls on a communication stream per rank (--comm-stream); times include the fork from and"
                        + " the join to the rank's stream");
            }
            table.note(ncclMissing == null ? "nccl: NCCL " + NcclComms.version() + " from " + LibNccl.loadedFrom()
                    + ", all-to-all-v of the same routing; x_nccl = NCCL median / gda4j median"
                    : "nccl: not run: " + ncclMissing);
        }
        if (reporting) {
            table.print(out, w.format);
        }
        return 0;
    }
}
