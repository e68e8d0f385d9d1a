package io.gda4j.samples;

import io.gda4j.cuda.CudaEvent;
import io.gda4j.moe.MoeBuffer;
import io.gda4j.moe.MoeConfig;
import io.gda4j.moe.check.MoeLowLatencyReferenceCheck;
import io.gda4j.moe.check.MoeReferenceCheck;
import io.gda4j.moe.check.MoeRouting;
import io.gda4j.moe.ll.LowLatencyRank;
import io.gda4j.moe.ll.LowLatencySizing;
import io.gda4j.moe.tensor.ElementType;
import io.gda4j.moe.ht.HighThroughputSizing;
import io.gda4j.moe.ht.MoeRowPath;
import io.gda4j.proxy.ProxyActivity;
import io.gda4j.proxy.ProxyConfig;
import io.gda4j.samples.moe.CopyEngineCeiling;
import io.gda4j.samples.moe.MoeFrameworkNcclBaseline;
import io.gda4j.samples.moe.MoeLowLatencyNcclBaseline;
import io.gda4j.samples.moe.MoeLowLatencyTimingRig;
import io.gda4j.samples.moe.MoeNcclBaseline;
import io.gda4j.samples.moe.MoeTimingRig;
import io.gda4j.samples.moe.RankGpus;
import io.gda4j.samples.nccl.LibNccl;
import io.gda4j.samples.nccl.NcclComms;
import io.gda4j.transport.Capability;
import io.gda4j.transport.Transport;
import io.gda4j.world.HeapBuffer;
import io.gda4j.world.PeerCard;
import io.gda4j.world.ProcessWorld;
import io.gda4j.world.Rank;
import io.gda4j.world.World;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.Option;
import org.apache.commons.cli.Options;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

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
        // The details (start lines under a launcher, what each byte count includes) are in the README's "How gda4j
        // moe measures": the help says what a user needs to read the table.
        return "Every rank dispatches TOKENS tokens of hidden size HIDDEN to top-K of EXPERTS experts (uniformly "
                + "routed; experts split evenly over the ranks), then combines them back. --mode "
                + "low-latency times the decoding calls instead (default 128 tokens, FP8) and their send and receive "
                + "halves. Each figure is the median and p99 over --iters timed pairs, after --warmup, of the slowest "
                + "rank's time from CUDA events, every rank's call queued before any runs. GBps: DeepEP's "
                + "bandwidth (bytes a rank receives, its own included, over the time; GB = 10^9 B); "
                + "link_GBps counts only bytes between GPUs; link_ratio compares it with ce_ceiling, every rank "
                + "copying to every peer at once in the same run. nccl: NCCL's all-to-all-v of the same routing "
                + "(from " + LibNccl.LIBRARY_ENV + " or a Python environment's nvidia/nccl/lib); fw: MoE over NCCL as "
                + "Megatron runs it; x_nccl and x_fw above 1 mean gda4j is faster. --check first compares with the "
                + "Java reference, bit for bit. README.md, \"How gda4j moe measures\", says more.";
    }

    /**
     * What the low-latency buffers take of each rank's heap at 8 ranks and 128 tokens of DeepEP's shape, per protocol:
     * the tagged one (the default over p2p), the counted one over p2p (asked for), and with a proxy or ibgda pair (the
     * counted one, always). Two lines of --help: no longer.
     */
    static String lowLatencyHeapNote() {
        MoeConfig c = MoeConfig.deepEpLowLatencyBuilder().build();
        return String.format(java.util.Locale.ROOT, "heap per rank at 8 ranks, 128 tokens: %.2f GiB tagged, %.2f"
                + " counted, %.2f proxy/ibgda",
                c.lowLatencySizing(8, false, LowLatencySizing.Protocol.TAGGED).heapBytes() / GIB,
                c.lowLatencySizing(8, false, LowLatencySizing.Protocol.COUNTED).heapBytes() / GIB,
                c.lowLatencySizing(8, true).heapBytes() / GIB);
    }

    private static final double GIB = 1024.0 * 1024 * 1024;

    @Override
    public String examples() {
        return "  gda4j moe                                   DeepEP's shape: 4096 tokens, hidden 7168, top-8 of 256\n"
                + "  gda4j moe --tokens 128:8192 --dtype bf16    a sweep\n"
                + "  gda4j moe --gpus 0,0 --tokens 256 --check   a functional check on one GPU\n"
                + "  gda4j moe --mode low-latency --tokens 1:512  decoding: DeepEP's low-latency shape, a sweep\n";
    }

    @Override
    public Options options() {
        Options o = new Options();
        WorldOptions.addTo(o);
        WorldOptions.addProxyHandlerOption(o);
        o.addOption(Option.builder().longOpt("tokens").hasArg().argName("LIST")
                .desc("tokens per rank: a list 128,4096 or a doubling range 128:8192 (default "
                        + MoeConfig.DEEP_EP_TOKENS + "; low-latency: " + MoeConfig.DEEP_EP_LOW_LATENCY_TOKENS + ")")
                .build());
        o.addOption(Option.builder().longOpt("hidden").hasArg().argName("N")
                .desc("hidden size (default " + MoeConfig.DEEP_EP_HIDDEN + ")").build());
        o.addOption(Option.builder().longOpt("experts").hasArg().argName("N")
                .desc("experts (default " + MoeConfig.DEEP_EP_EXPERTS + ")").build());
        o.addOption(Option.builder().longOpt("topk").hasArg().argName("K")
                .desc("experts per token (default " + MoeConfig.DEEP_EP_TOP_K + ")").build());
        o.addOption(Option.builder().longOpt("dtype").hasArg().argName("T")
                .desc("dispatch type: bf16, fp8 or both (default); combine is BF16").build());
        o.addOption(Option.builder().longOpt("channels").hasArg().argName("N")
                .desc("channels per rank, two thread blocks each (default " + MoeConfig.Builder.DEFAULT_CHANNELS + ": "
                        + 2 * MoeConfig.Builder.DEFAULT_CHANNELS + " SMs, as DeepEP's tests use; at most SMs / (2 x"
                        + " ranks per GPU))").build());
        o.addOption(Option.builder().longOpt("ring").hasArg().argName("ROWS")
                .desc("ring rows per channel and peer (default " + MoeConfig.Builder.DEFAULT_RING_TOKENS + "; proxy: "
                        + MoeConfig.Builder.FEW_PUTS_RING_TOKENS + ")").build());
        o.addOption(Option.builder().longOpt("chunk").hasArg().argName("ROWS")
                .desc("rows per announced chunk (default " + MoeConfig.Builder.DEFAULT_CHUNK_TOKENS + "; proxy: "
                        + MoeConfig.Builder.FEW_PUTS_CHUNK_TOKENS + ")").build());
        o.addOption(Option.builder().longOpt("iters").hasArg().argName("N")
                .desc("timed iterations (default " + DEFAULT_ITERS + ")").build());
        o.addOption(Option.builder().longOpt("warmup").hasArg().argName("N")
                .desc("untimed iterations first (default " + DEFAULT_WARMUP + ")").build());
        o.addOption(Option.builder().longOpt("mode").hasArg().argName("M")
                .desc("high-throughput (default) or low-latency (decoding; " + lowLatencyHeapNote() + ")")
                .build());
        o.addOption(Option.builder().longOpt("pow2-scales")
                .desc("low-latency FP8: scales rounded up to powers of two (UE8M0)").build());
        o.addOption(Option.builder().longOpt("comm-stream")
                .desc("high-throughput: the calls on a communication stream per rank").build());
        o.addOption(Option.builder().longOpt("combine-from").hasArg().argName("WHERE")
                .desc("combine reads y from: heap (default, pulled) or tensor (pushed)")
                .build());
        o.addOption(Option.builder().longOpt("rows").hasArg().argName("PATHS")
                .desc("auto (default), sm, copy-engine or sm,copy-engine; proxy: sm = rings").build());
        o.addOption(Option.builder().longOpt("check").desc("compare with the Java reference first").build());
        o.addOption(Option.builder().longOpt("quiet").desc("no progress lines on stderr").build());
        return o;
    }

    /** The most tokens per rank the command times: past it the buffers outgrow any GPU's memory. */
    static final int MAX_TOKENS = 1 << 16;
    /** Timed iterations by default. */
    static final int DEFAULT_ITERS = 20;
    /** Untimed iterations before them by default. */
    static final int DEFAULT_WARMUP = 3;

    /**
     * The model both modes route, parsed once from --hidden, --experts and --topk (defaults: DeepEP's shape, as
     * MoeConfig states it), --topk checked against --experts before a config names its own fields.
     */
    record Model(int hidden, int experts, int topK) {
        static Model parse(CommandLine cmd) {
            int hidden = OptionValues.integer(cmd, "hidden", MoeConfig.DEEP_EP_HIDDEN, 1, Integer.MAX_VALUE);
            int experts = OptionValues.integer(cmd, "experts", MoeConfig.DEEP_EP_EXPERTS, 1, Integer.MAX_VALUE);
            int topK = OptionValues.integer(cmd, "topk", MoeConfig.DEEP_EP_TOP_K, 1, Integer.MAX_VALUE);
            checkTopK(topK, experts);
            return new Model(hidden, experts, topK);
        }

        /** {@code b} routing this model. */
        MoeConfig.Builder into(MoeConfig.Builder b) {
            return b.hidden(hidden).numExperts(experts).topK(topK);
        }
    }

    /**
     * What both modes time, parsed once: the token counts (default: DeepEP's for the mode), the iterations, and where
     * the combines read the expert outputs.
     */
    record Sweep(List<Integer> tokens, int iters, int warmup, boolean combineFromHeap) {
        static Sweep parse(CommandLine cmd, boolean lowLatency) {
            int fallback = lowLatency ? MoeConfig.DEEP_EP_LOW_LATENCY_TOKENS : MoeConfig.DEEP_EP_TOKENS;
            return new Sweep(tokenList(cmd.getOptionValue("tokens", Integer.toString(fallback))),
                    OptionValues.integer(cmd, "iters", DEFAULT_ITERS, 1, 1_000_000),
                    OptionValues.integer(cmd, "warmup", DEFAULT_WARMUP, 0, 1_000_000), MoeCommand.combineFromHeap(cmd));
        }

        /** The largest token count: what the buffers are sized for. */
        int maxTokens() {
            return tokens.stream().mapToInt(Integer::intValue).max().orElse(1);
        }
    }

    /**
     * The {@code --tokens} value: a list ({@code 128,4096}, no element twice) or a doubling range
     * ({@code 128:8192}), each count from 1 to {@link #MAX_TOKENS}; refused here, before any GPU is needed.
     */
    static List<Integer> tokenList(String text) {
        String accepted = "--tokens accepts whole numbers from 1 to " + MAX_TOKENS + ", a list (128,4096) or a doubling"
                + " range (128:8192), got '" + text + "'";
        List<Integer> list = new ArrayList<>();
        if (text.contains(":")) {
            String[] p = text.split(":", -1);
            if (p.length != 2) {
                throw new UsageException(accepted);
            }
            int from = tokenCount(p[0], accepted);
            int to = tokenCount(p[1], accepted);
            if (to < from) {
                throw new UsageException("--tokens range '" + text + "' must be FROM:TO with FROM <= TO");
            }
            for (long t = from; t <= to; t *= 2) {
                list.add((int) t);
            }
        } else {
            for (String part : OptionValues.list("tokens", text, false)) {
                list.add(tokenCount(part, accepted));
            }
        }
        return list;
    }

    private static int tokenCount(String text, String accepted) {
        try {
            int t = Integer.parseInt(text.strip());
            if (t >= 1 && t <= MAX_TOKENS) {
                return t;
            }
        } catch (NumberFormatException e) {
            // the message below says what is accepted
        }
        throw new UsageException(accepted);
    }

    /**
     * A refusal of a MoE config in the command's words: the options the user wrote, not the config's fields.
     * Longer field names first, so {@code numExperts} is not half-replaced by a shorter one.
     */
    static String optionWords(String message) {
        String m = message.replace("MoeConfig lowLatency ", "").replace("MoeConfig ", "");
        String[][] fields = {{"maxTokensPerRank", "--tokens"}, {"numExperts", "--experts"},
            {"numChannels", "--channels"}, {"chunkTokens", "--chunk"}, {"ringTokens", "--ring"},
            {"dispatchType", "--dtype"}, {"hidden", "--hidden"}, {"topK", "--topk"}, {"dtype", "--dtype"}};
        for (String[] f : fields) {
            m = m.replaceAll("(?<![-\\w])" + f[0] + "(?!\\w)", f[1]);
        }
        return m;
    }

    /** {@code --topk} against {@code --experts}, before a config names its own fields. */
    static void checkTopK(int topK, int experts) {
        int most = Math.min(MoeConfig.MAX_TOP_K, experts);
        if (topK > most) {
            throw new UsageException("--topk accepts 1 to " + most + " (at most --experts " + experts + " and "
                    + MoeConfig.MAX_TOP_K + "), got '" + topK + "'");
        }
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

    /** The --dtype value (else {@code fallback}): the dispatch types to time, in table order. */
    static List<ElementType> dtypes(CommandLine cmd, String fallback) {
        String text = cmd.getOptionValue("dtype", fallback).trim().toLowerCase(java.util.Locale.ROOT);
        return switch (text) {
            case "bf16" -> List.of(ElementType.BF16);
            case "fp8" -> List.of(ElementType.FP8_E4M3);
            case "both" -> List.of(ElementType.BF16, ElementType.FP8_E4M3);
            default -> throw new UsageException("--dtype must be bf16, fp8 or both, got " + text);
        };
    }

    /** The low-latency configs the options ask for (one per dispatch type), checked before any world is opened. */
    static List<MoeConfig> lowLatencyConfigs(CommandLine cmd, Model model, int maxTokens) {
        List<ElementType> dtypes = dtypes(cmd, "fp8");
        boolean pow2 = cmd.hasOption("pow2-scales");
        if (pow2 && !dtypes.contains(ElementType.FP8_E4M3)) {
            throw new UsageException("--pow2-scales applies to FP8 dispatch: use --dtype fp8 or both");
        }
        List<MoeConfig> configs = new ArrayList<>();
        try {
            for (ElementType t : dtypes) {
                configs.add(model.into(MoeConfig.lowLatencyBuilder()).lowLatency(maxTokens, t)
                        .powerOfTwoScales(pow2 && t == ElementType.FP8_E4M3).build());
            }
        } catch (IllegalArgumentException e) {
            throw new UsageException(optionWords(e.getMessage()), e);
        }
        return configs;
    }

    private int runLowLatency(CommandLine cmd, Model model, Sweep sweep, PrintStream out, PrintStream err) {
        if (cmd.hasOption("comm-stream")) {
            throw new UsageException("--comm-stream applies to --mode high-throughput; the low-latency calls run on the"
                    + " rank's stream");
        }
        if (cmd.hasOption("rows")) {
            throw new UsageException("--rows applies to --mode high-throughput");
        }
        boolean combineFromHeap = sweep.combineFromHeap();
        List<Integer> tokens = sweep.tokens();
        int maxTokens = sweep.maxTokens();
        List<MoeConfig> configs = lowLatencyConfigs(cmd, model, maxTokens);
        int iters = sweep.iters();
        int warmup = sweep.warmup();
        WorldOptions w = WorldOptions.parse(cmd);
        int ranks = w.worldSize();
        long heap = heapBytes(configs, ranks, 0);
        ResultTable table = new ResultTable("moe --mode low-latency: per call, the slowest rank, median and p99 of "
                + iters + " (ms)", List.of("dtype", "tokens", "dispatch_ms", "dispatch_p99_ms", "combine_ms",
                "combine_p99_ms", "dispatch_send_ms", "dispatch_recv_ms", "combine_send_ms", "combine_recv_ms",
                "nccl_dispatch_ms", "nccl_dispatch_p99_ms", "dispatch_x_nccl", "nccl_combine_ms", "nccl_combine_p99_ms",
                "combine_x_nccl"));
        boolean reporting;
        try (World world = w.openWorld(heap)) {
            // Under a launcher every process runs the same calls; rank 0's process reports.
            reporting = world.localRank(0).isPresent();
            Progress progress = new Progress(err, (tokens.size() + (cmd.hasOption("check") ? 1 : 0)) * configs.size(),
                    cmd.hasOption("quiet") || !reporting);
            String ncclMissing = MoeNcclBaseline.unavailableReason(world);
            List<MoeBuffer> buffers = new ArrayList<>();
            int waitingBlocks = 0;
            boolean staged = false;
            LowLatencySizing first = null;
            List<String> proxyNotes = new ArrayList<>();
            try {
                for (MoeConfig c : configs) {
                    buffers.add(MoeBuffer.create(world, c));
                    staged |= buffers.get(buffers.size() - 1).lowLatency().sizing().staged();
                }
                first = buffers.get(0).lowLatency().sizing();
                for (MoeBuffer ll : buffers) {
                    String name = ll.config().lowLatencyDispatchType().name()
                            + (ll.config().powerOfTwoScales() ? "/UE8M0" : "");
                    if (cmd.hasOption("check")) {
                        progress.step("check " + name);
                        try (MoeLowLatencyReferenceCheck check = new MoeLowLatencyReferenceCheck(ll, combineFromHeap)) {
                            check.run(MoeRouting.Kind.SKEWED, 1,
                                    MoeRouting.tokenCounts(ranks, maxTokens, new java.util.Random(1)), true);
                        }
                    }
                    try (MoeLowLatencyTimingRig run = new MoeLowLatencyTimingRig(ll, combineFromHeap);
                         MoeLowLatencyNcclBaseline nccl = ncclMissing == null ? new MoeLowLatencyNcclBaseline(ll) : null) {
                        waitingBlocks = run.waitingBlocksPerRank();
                        for (int t : tokens) {
                            progress.step(name + " " + t + " tokens");
                            int[] perRank = new int[ranks];
                            Arrays.fill(perRank, t);
                            ProxyActivity[] before = proxyActivity(world);
                            MoeLowLatencyTimingRig.Timing timing = run.time(MoeRouting.Kind.UNIFORM, 7, perRank,
                                    warmup, iters);
                            // The rig runs warmup + iters pairs without the split, then as many with it.
                            proxyNote(world, before, 2 * (warmup + iters), name + " " + t + " tokens",
                                    percentile(timing.dispatchMillis(), 0.5) + percentile(timing.combineMillis(), 0.5))
                                    .ifPresent(proxyNotes::add);
                            List<Object> row = new ArrayList<>(List.of(name, t, percentile(timing.dispatchMillis(), 0.5),
                                    percentile(timing.dispatchMillis(), 0.99), percentile(timing.combineMillis(), 0.5),
                                    percentile(timing.combineMillis(), 0.99),
                                    percentile(timing.dispatchSendMillis(), 0.5),
                                    percentile(timing.dispatchReceiveMillis(), 0.5),
                                    percentile(timing.combineSendMillis(), 0.5),
                                    percentile(timing.combineReceiveMillis(), 0.5)));
                            MoeNcclBaseline.Timing base = nccl == null ? null
                                    : nccl.time(MoeRouting.Kind.UNIFORM, 7, perRank, warmup, iters);
                            row.addAll(ncclCells(base, ncclMissing, percentile(timing.dispatchMillis(), 0.5),
                                    percentile(timing.combineMillis(), 0.5)));
                            table.add(row.toArray());
                        }
                    }
                }
            } finally {
                buffers.forEach(MoeBuffer::close);
            }
            progress.done();
            if (reporting) {
                table.note(placement(world, w));
            }
            table.note(timingNote(world, true));
            table.note("dispatch/combine: the calls without the split; send/recv columns: medians of the halves, timed"
                    + " apart with the send/receive split");
            proxyNotes.forEach(table::note);
            table.note(lowLatencyDispatchNote(first));
            table.note(lowLatencyCombineFromNote(combineFromHeap, staged));
            table.note(lowLatencySmsNote(waitingBlocks, configs.get(0).numLocalExperts(ranks),
                    world.localRanks().get(0).device().multiprocessorCount()));
            table.note(ncclMissing == null ? "nccl: NCCL " + NcclComms.version() + " from " + LibNccl.loadedFrom()
                    + ", all-to-all-v of the same routing, one row per (token, expert); x_nccl = NCCL median / gda4j"
                    + " median" : "nccl: not run: " + ncclMissing);
        }
        if (reporting) {
            table.print(out, w.format);
        }
        return 0;
    }

    /** Each local rank's proxy channels' activity so far, summed over its peers (null: not a local rank). */
    static ProxyActivity[] proxyActivity(World world) {
        ProxyActivity[] a = new ProxyActivity[world.size()];
        for (int r = 0; r < a.length; r++) {
            Optional<Rank> local = world.localRank(r);
            if (local.isPresent()) {
                a[r] = ProxyActivity.NONE;
                for (int p = 0; p < a.length; p++) {
                    a[r] = a[r].plus(ProxyActivity.of(local.get(), p).orElse(ProxyActivity.NONE));
                }
            }
        }
        return a;
    }

    /**
     * What the proxy threads did per dispatch + combine pair since {@code before} ({@code pairs} pairs ran), beside
     * the pair's median time: a handler time close to it says the proxy thread is what limits the calls. Empty where
     * no rank of this process has proxy links.
     */
    static Optional<String> proxyNote(World world, ProxyActivity[] before, int pairs, String what, double pairMillis) {
        ProxyActivity[] after = proxyActivity(world);
        StringBuilder b = new StringBuilder();
        for (int r = 0; r < after.length; r++) {
            if (after[r] == null) {
                continue;
            }
            ProxyActivity d = after[r].since(before[r]);
            if (d.triggers() == 0) {
                continue;
            }
            b.append(b.length() == 0 ? "" : "; ").append(String.format(Locale.ROOT,
                    "rank %d's channels %.0f triggers, %.0f us of handler time", r, (double) d.triggers() / pairs,
                    d.handlerNanos() / 1e3 / pairs));
        }
        if (b.length() == 0) {
            return Optional.empty();
        }
        return Optional.of(String.format(Locale.ROOT, "proxy, %s, per dispatch + combine (their medians add up to %.0f"
                + " us): %s; the handler time is the proxy thread's driver calls, which queue the copies and signals"
                + " without waiting for them (rank r's channels are served by proxy thread r mod %s)", what,
                pairMillis * 1e3, b, ProxyConfig.THREADS_ENV));
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
                + Describe.nicLabel(world, 0, 1) + (w.gpus.stream().distinct().count() < w.gpus.size() ? shared : "");
    }

    /** Bytes of the copy-engine reference copy (memcpyPeer): large enough that the copy's start-up cost vanishes. */
    static final long PEER_COPY_BYTES = 256L << 20;
    /** Measurements of the reference copy; the median is reported. */
    static final int PEER_COPY_REPS = 5;
    /** Rounds of every rank's copies per measurement of the ceiling. */
    static final int CEILING_ITERATIONS = 4;

    /** The high-throughput table's columns. */
    static final List<String> THROUGHPUT_COLUMNS = List.of("dtype", "rows", "tokens", "dispatch_ms", "dispatch_p99_ms",
            "dispatch_GBps", "dispatch_link_GBps", "dispatch_link_ratio", "combine_ms", "combine_p99_ms",
            "combine_GBps", "combine_link_GBps", "combine_link_ratio", "sms", "nccl_dispatch_ms", "nccl_dispatch_p99_ms",
            "dispatch_x_nccl", "nccl_combine_ms", "nccl_combine_p99_ms", "combine_x_nccl", "fw_dispatch_ms",
            "dispatch_x_fw", "fw_combine_ms", "combine_x_fw");

    /** The note on the framework columns. */
    static final String FRAMEWORK_NOTE = "fw: MoE over NCCL as Megatron's all-to-all dispatcher runs it: per-expert"
            + " counts all-gathered, copied to the host and waited for, tokens permuted to one row per (token, expert),"
            + " all-to-all-v, rows regrouped by local expert; combine the reverse and a weighted sum; GPU steps on all"
            + " SMs, timed as the other columns; x_fw = fw median / gda4j median";

    /**
     * The gda4j cells of a high-throughput row, from dispatch_ms to combine_link_ratio: per call the median and p99,
     * DeepEP's bandwidth, the link bandwidth and its ratio to {@code ceilingGbps} (the copy engines' all-to-all
     * ceiling, NaN when not measured). Where no byte crosses between GPUs (every rank on one GPU) the link cells are
     * "-".
     */
    static List<Object> throughputCells(MoeTimingRig.Timing t, double ceilingGbps) {
        double d = percentile(t.dispatchMillis(), 0.5);
        double c = percentile(t.combineMillis(), 0.5);
        Object dLink = gbps(max(t.dispatchLinkBytesPerRank()), d);
        Object cLink = gbps(max(t.combineLinkBytesPerRank()), c);
        return List.of(d, percentile(t.dispatchMillis(), 0.99), max(t.recvBytesPerRank()) / (d * 1e6), dLink,
                ratio(dLink, ceilingGbps), c, percentile(t.combineMillis(), 0.99),
                max(t.combineBytesPerRank()) / (c * 1e6), cLink, ratio(cLink, ceilingGbps));
    }

    /**
     * The framework cells of a row: its median dispatch and combine and how many times gda4j's they take; where NCCL
     * did not run, the first clause of {@code missing}, then dashes.
     */
    static List<Object> frameworkCells(MoeNcclBaseline.Timing fw, String missing, double dispatchMillis,
                                       double combineMillis) {
        if (fw == null) {
            return List.of(ncclColumn(missing), "-", "-", "-");
        }
        double d = percentile(fw.dispatchMillis(), 0.5);
        double c = percentile(fw.combineMillis(), 0.5);
        return List.of(d, d / dispatchMillis, c, c / combineMillis);
    }

    /**
     * The NCCL cells of a row (either mode), against gda4j's median dispatch and combine times; where NCCL did not run
     * (no {@code base}), the first clause of {@code missing}, why not, then dashes.
     */
    static List<Object> ncclCells(MoeNcclBaseline.Timing base, String missing, double dispatchMillis,
                                  double combineMillis) {
        if (base == null) {
            return List.of(ncclColumn(missing), "-", "-", "-", "-", "-");
        }
        double nd = percentile(base.dispatchMillis(), 0.5);
        double nc = percentile(base.combineMillis(), 0.5);
        return List.of(nd, percentile(base.dispatchMillis(), 0.99), nd / dispatchMillis, nc,
                percentile(base.combineMillis(), 0.99), nc / combineMillis);
    }

    private static long max(long[] v) {
        return Arrays.stream(v).max().orElse(0);
    }

    /** GB/s of {@code bytes} in {@code millis}, or "-" when there are no bytes (nothing crossed between GPUs). */
    static Object gbps(long bytes, double millis) {
        return bytes == 0 ? "-" : bytes / (millis * 1e6);
    }

    /** {@code link / peerGbps}, or "-" when either is missing. */
    static Object ratio(Object link, double peerGbps) {
        return link instanceof Double l && peerGbps > 0 ? l / peerGbps : "-";
    }

    /**
     * The copy engines' one-way bandwidth from rank 0's GPU to {@code peer}'s (-1: none), measured in the process of
     * rank 0 into the reference buffer ({@code buffer}, the first heap allocation); NaN elsewhere and without a peer.
     * Every process calls it (it meets the others afterwards, so no MoE call overlaps the copies).
     */
    private static double peerCopyGbps(World world, HeapBuffer buffer, int peer) {
        double gbps = Double.NaN;
        Optional<Rank> rank0 = world.localRank(0);
        if (peer >= 0 && rank0.isPresent()) {
            Rank r = rank0.get();
            try (CudaEvent start = r.context().createEvent(); CudaEvent stop = r.context().createEvent()) {
                gbps = CopyEngineBandwidth.gbps(world, r, peer, buffer.offset(), buffer.offset(), PEER_COPY_BYTES,
                        PutBandwidth.iterationsFor(PEER_COPY_BYTES), PEER_COPY_REPS, start, stop);
            }
        }
        world.barrier();
        return gbps;
    }

    /** The note that gives memcpyPeer, the copy engines' one-way figure beside the ceiling. */
    static String peerCopyNote(int peer, double gbps) {
        if (peer < 0) {
            return "memcpyPeer: not measured: every rank shares rank 0's GPU, so no byte crosses between GPUs";
        }
        return String.format(Locale.ROOT, "memcpyPeer: %.1f GB/s one way, rank 0's GPU -> rank %d's GPU, nothing else"
                + " moving (cuMemcpyPeerAsync of %d MiB, median of %d, in this run)", gbps, peer,
                PEER_COPY_BYTES >> 20, PEER_COPY_REPS);
    }

    /** The note that gives ce_ceiling, the copy engines' all-to-all figure the link columns compare with. */
    static String ceilingNote(CopyEngineCeiling.Result ceiling, int ranks) {
        if (ceiling == null) {
            return "ce_ceiling: not measured: no rank has a peer on another GPU";
        }
        return String.format(Locale.ROOT, "ce_ceiling: %.1f GB/s per rank, every rank copying %d MiB to every rank on"
                + " another GPU at once, both directions busy (cuMemcpyPeerAsync, peer after peer, %d rounds behind"
                + " one gate, the slowest rank, median of %d, in this run)", ceiling.gbps(),
                CopyEngineCeiling.bytesPerPeer(PEER_COPY_BYTES, ranks) >> 20, CEILING_ITERATIONS,
                ceiling.slowestMillis().length);
    }

    /**
     * Closes {@code all} from its last member down to {@code from}, newest first: nested try-with-resources, so null
     * members are skipped, each is closed whatever the later ones threw, and their failures are added as suppressed.
     */
    @SuppressWarnings("try") // the resource is closed, not used
    static void closeAll(List<? extends AutoCloseable> all, int from) {
        if (from == all.size()) {
            return;
        }
        try (AutoCloseable first = all.get(from)) {
            closeAll(all, from + 1);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** --rows: what moves the high-throughput rows, one path or a list of them to time in turn. */
    static List<MoeRowPath> rowPaths(CommandLine cmd) {
        List<MoeRowPath> paths = new ArrayList<>();
        for (String part : cmd.getOptionValue("rows", "auto").split(",", -1)) {
            String v = part.trim().toLowerCase(Locale.ROOT);
            MoeRowPath p = switch (v) {
                case "auto" -> MoeRowPath.AUTO;
                case "sm" -> MoeRowPath.SM;
                case "copy-engine" -> MoeRowPath.COPY_ENGINE;
                default -> throw new UsageException("--rows must be auto, sm or copy-engine, or a list of them"
                        + " (sm,copy-engine), got " + (v.isEmpty() ? "an empty entry" : v));
            };
            if (paths.contains(p)) {
                throw new UsageException("--rows names " + v + " twice: each path is timed once per token count");
            }
            paths.add(p);
        }
        return paths;
    }

    /** The rows cell: what moved the rows of {@code s} ("sm", "copy-engine", "host-transfers" or "rings"). */
    static String rowsCell(HighThroughputSizing s) {
        return !s.direct() ? "rings" : s.hostTransfers() ? "host-transfers" : s.copyEngine() ? "copy-engine" : "sm";
    }

    /** --combine-from: whether the expert outputs go to the buffer's combine input (heap, the default). */
    static boolean combineFromHeap(CommandLine cmd) {
        String from = cmd.getOptionValue("combine-from", "heap").trim().toLowerCase(java.util.Locale.ROOT);
        if (!from.equals("heap") && !from.equals("tensor")) {
            throw new UsageException("--combine-from must be heap or tensor, got " + from);
        }
        return from.equals("heap");
    }

    /** The note that says which low-latency protocol ran and how its dispatch moves a token's rows to a p2p rank. */
    static String lowLatencyDispatchNote(LowLatencySizing s) {
        if (s.tagged()) {
            return "protocol: tagged (the default, every pair p2p or self): each 4 bytes travel beside the call's tag,"
                    + " a token's row once per other rank that has its experts (its own experts' rows in place), no"
                    + " fence and no count after the rows; a call without the split is one kernel while one wave"
                    + " holds its blocks (-D" + LowLatencyRank.ONE_KERNEL_DISPATCH_PROP_NAME + "=auto|true|false);"
                    + " the combine sets one flag per rank (-D" + LowLatencySizing.PROTOCOL_PROP_NAME
                    + "=counted runs the counted one)";
        }
        String why = s.staged() ? "the world has a proxy or ibgda pair" : "-D" + LowLatencySizing.PROTOCOL_PROP_NAME
                + "=counted; the tagged one is the default";
        String property = " (-D" + LowLatencySizing.GATHER_ROWS_PROP_NAME + "=auto|true|false)";
        String rows = s.gathersRows()
                ? "over p2p a token's row goes once to each other rank that has its experts, into that rank's token"
                        + " stage, which its receive half copies out per expert; calls of fewer than "
                        + LowLatencySizing.GATHER_MIN_TOKENS + " tokens store it once per expert"
                : "over p2p a token's row is stored once per expert into the expert's slots (rows are gathered per"
                        + " rank where topK >= 2 x ranks)";
        return "protocol: counted (" + why + "): a count per (expert, source) released after the rows; " + rows
                + property;
    }

    /** The note that says where the low-latency combines read the expert outputs. */
    static String lowLatencyCombineFromNote(boolean fromHeap, boolean staged) {
        if (!fromHeap) {
            return "combine: expert outputs in a tensor of each rank's own; the experts' ranks return the rows"
                    + (staged ? " (the world has a proxy or ibgda pair)" : "") + ", then each rank sums them"
                    + " (--combine-from tensor)";
        }
        if (staged) {
            return "combine: expert outputs in each call's combineInput(); the experts' ranks return the rows (the"
                    + " world has a proxy or ibgda pair), then each rank sums them (--combine-from heap)";
        }
        return "combine: expert outputs in each call's MoeLowLatencyDispatch.combineInput(); each rank reads its"
                + " tokens' rows from the experts' ranks as it sums them (--combine-from heap)";
    }

    /**
     * The note that says what moved the rows of {@code s} (the last buffer's) and where the high-throughput combines
     * read the expert outputs.
     */
    static String combineFromNote(boolean fromHeap, HighThroughputSizing s) {
        if (!s.direct()) {
            return "combine: from a tensor of each rank's own, through rings (an ibgda pair, or the proxy with --rows sm)";
        }
        String from = fromHeap ? "each rank's MoeRank.combineInput() (--combine-from heap)"
                : "a tensor of each rank's own (--combine-from tensor)";
        if (s.hostTransfers()) {
            return "rows by host-queued transfers over the proxy (--rows auto or copy-engine; sm forces the rings):"
                    + " dispatch packs each destination's rows on the SMs, then the host queues one transfer per array"
                    + " and peer and the call's sequence behind them, no trigger (copies on the call's stream with the"
                    + " copy-engine handler, one chained post of RDMA WRITEs per peer with the verbs handler); combine"
                    + " returns each source's rows in one transfer and sums on the SMs, reading the expert outputs from "
                    + from;
        }
        if (s.copyEngine()) {
            return "rows by the copy engines (--rows copy-engine): dispatch packs each destination's rows on the SMs, one"
                    + " copy per array and peer moves them; combine copies each source's rows back in one copy and sums"
                    + " on the SMs, reading the expert outputs from " + from;
        }
        return fromHeap
                ? "combine: expert outputs in each rank's MoeRank.combineInput(); each rank pulls its tokens' rows from"
                        + " the peers and sums them as they arrive (--combine-from heap)"
                : "combine: expert outputs in a tensor of each rank's own; each rank pushes the rows to their sources,"
                        + " which sum them once all have landed (--combine-from tensor)";
    }

    /** The note that gives the SMs each high-throughput call uses. */
    static String smsNote(int channels, int blocksPerRank, int gpuSms) {
        return "SMs: " + channels + " channels per rank; each dispatch and each combine runs " + blocksPerRank
                + " thread blocks per rank (2 per channel), one per SM: " + blocksPerRank + " of the GPU's " + gpuSms
                + " SMs (NCCL's columns use NCCL's own channels)";
    }

    /** The note that says how the times were taken: in one process (by mode), or under a launcher. */
    static String timingNote(World world, boolean lowLatency) {
        if (world.localRanks().size() < world.size()) {
            return "times: CUDA events on each rank's stream; each process queues every timed step (NCCL's too) behind"
                    + " a gate that is also a start line on the GPUs (a signal to every peer, then a wait for theirs),"
                    + " so launch skew between the processes is not counted";
        }
        return "times: CUDA events on each rank's stream; each step (NCCL's too) is queued on every rank behind a gate"
                + " opened once all of it is queued, so the host's launches are not counted";
    }

    /** The low-latency table's note on SMs: grids by tokens and local experts, the waiting ones within a share. */
    static String lowLatencySmsNote(int waitingBlocks, int localExperts, int gpuSms) {
        return "SMs: grids sized per call; a call without the split is one kernel (but a tagged dispatch whose blocks"
                + " one wave cannot hold: its two halves back to back): dispatch one block per token or"
                + " token part, combine one per local expert or 8 (token, slice) sums, both up to what the GPU holds"
                + " at once where a rank has its GPU alone, else within the rank's share of its GPU, " + waitingBlocks
                + " of " + gpuSms + " SMs; with the split, the send halves by tokens and local experts ("
                + localExperts + " blocks), the receive halves within that share; nothing stays resident between"
                + " calls";
    }

    /**
     * The heap a world of {@code ranks} needs for {@code configs} ({@link MoeConfig#heapBytes}: any world of that
     * size), each rounded up by 1 MiB, after {@code first} bytes of other buffers.
     */
    static long heapBytes(List<MoeConfig> configs, int ranks, long first) {
        long heap = first;
        for (MoeConfig c : configs) {
            try {
                heap += c.heapBytes(ranks) + (1 << 20);
            } catch (IllegalArgumentException e) {
                throw new UsageException(optionWords(e.getMessage()), e);
            }
        }
        return heap;
    }

    /**
     * The high-throughput configs the options ask for (one per dispatch type), checked before any world is opened;
     * {@code fewPuts}: the world's puts cost a host call each (a pair whose transport {@code PREFERS_FEW_PUTS}: the
     * proxy), so the rings' defaults are the larger ones.
     */
    static List<MoeConfig> highThroughputConfigs(CommandLine cmd, Model model, int maxTokens, boolean fewPuts) {
        List<ElementType> dtypes = dtypes(cmd, "both");
        List<MoeRowPath> rowPaths = rowPaths(cmd);
        // Over the proxy each announced chunk is a trigger, whose copy and signal cost the proxy thread a few
        // microseconds of driver calls: larger chunks, and a ring that holds several, cut them (MoeConfig.Builder).
        int ring = OptionValues.integer(cmd, "ring", fewPuts ? MoeConfig.Builder.FEW_PUTS_RING_TOKENS
                : MoeConfig.Builder.DEFAULT_RING_TOKENS, 1, Integer.MAX_VALUE);
        int chunk = OptionValues.integer(cmd, "chunk", fewPuts ? MoeConfig.Builder.FEW_PUTS_CHUNK_TOKENS
                : MoeConfig.Builder.DEFAULT_CHUNK_TOKENS, 1, Integer.MAX_VALUE);
        int channels = OptionValues.integer(cmd, "channels", MoeConfig.Builder.DEFAULT_CHANNELS, 1, Integer.MAX_VALUE);
        List<MoeConfig> configs = new ArrayList<>();
        try {
            for (ElementType t : dtypes) {
                for (MoeRowPath rows : rowPaths) {
                    configs.add(model.into(MoeConfig.builder()).dtype(t).maxTokensPerRank(maxTokens)
                            .numChannels(channels).ringTokens(ring).chunkTokens(chunk)
                            .combineWarps(Math.min(MoeConfig.Builder.DEFAULT_COMBINE_WARPS, ring))
                            .communicationStream(cmd.hasOption("comm-stream")).rowPath(rows).build());
                }
            }
        } catch (IllegalArgumentException e) {
            throw new UsageException(optionWords(e.getMessage()), e);
        }
        return configs;
    }

    @Override
    public int run(CommandLine cmd, PrintStream out, PrintStream err) {
        boolean lowLatency = lowLatency(cmd);
        Model model = Model.parse(cmd);
        Sweep sweep = Sweep.parse(cmd, lowLatency);
        return lowLatency ? runLowLatency(cmd, model, sweep, out, err) : runHighThroughput(cmd, model, sweep, out, err);
    }

    private int runHighThroughput(CommandLine cmd, Model model, Sweep sweep, PrintStream out, PrintStream err) {
        if (cmd.hasOption("pow2-scales")) {
            throw new UsageException("--pow2-scales applies to --mode low-latency (its FP8 dispatch's scales); the"
                    + " high-throughput mode does not round them: add --mode low-latency or drop --pow2-scales");
        }
        WorldOptions w = WorldOptions.parse(cmd);
        List<Integer> tokens = sweep.tokens();
        int maxTokens = sweep.maxTokens();
        int iters = sweep.iters();
        int warmup = sweep.warmup();
        boolean combineFromHeap = sweep.combineFromHeap();
        // The defaults depend on whether a pair's puts cost a host call (Capability.PREFERS_FEW_PUTS). A named
        // transport says so at once; under auto the world's pairs do, once it is open, so its heap fits either.
        List<MoeConfig> fewPutsConfigs = highThroughputConfigs(cmd, model, maxTokens, true);
        List<MoeConfig> defaultConfigs = highThroughputConfigs(cmd, model, maxTokens, false);
        Optional<Transport> named = Transport.ofLabel(w.transport);
        int ranks = w.worldSize();
        // The copy-engine references' buffer comes first, at the same heap offset on every rank.
        long first = PEER_COPY_BYTES + 4096;
        long heap = named.isPresent()
                ? heapBytes(named.get().has(Capability.PREFERS_FEW_PUTS) ? fewPutsConfigs : defaultConfigs, ranks, first)
                : Math.max(heapBytes(fewPutsConfigs, ranks, first), heapBytes(defaultConfigs, ranks, first));
        List<MoeConfig> configs = defaultConfigs; // the same size either way, for the progress count
        ResultTable table = new ResultTable("moe: dispatch and combine per rank, median and p99 of " + iters
                + " (ms; GB/s = 10^9 B/s: GBps DeepEP's definition, link_GBps between GPUs only)", THROUGHPUT_COLUMNS);
        boolean reporting;
        try (World world = w.openWorld(heap)) {
            if (world.anyPair(t -> t.has(Capability.PREFERS_FEW_PUTS))) {
                configs = fewPutsConfigs;
            }
            // Under a launcher every process runs the same calls; rank 0's process reports.
            reporting = world.localRank(0).isPresent();
            Progress progress = new Progress(err, (tokens.size() + (cmd.hasOption("check") ? 1 : 0)) * configs.size(),
                    cmd.hasOption("quiet") || !reporting);
            int[] gpus = RankGpus.of(world);
            int copyPeer = RankGpus.firstOnAnotherGpu(gpus, 0);
            // The copy-engine references' buffer comes first, at the same heap offset on every rank.
            HeapBuffer reference = world.heap().allocate(PEER_COPY_BYTES);
            double peerGbps = peerCopyGbps(world, reference, copyPeer);
            CopyEngineCeiling.Result ceiling = CopyEngineCeiling.measure(world, reference, gpus,
                    CopyEngineCeiling.bytesPerPeer(PEER_COPY_BYTES, ranks), CEILING_ITERATIONS, PEER_COPY_REPS);
            double ceilingGbps = ceiling == null ? Double.NaN : ceiling.gbps();
            List<MoeBuffer> buffers = new ArrayList<>();
            String ncclMissing = MoeNcclBaseline.unavailableReason(world);
            int blocksPerRank = 0;
            List<String> rowNotes = new ArrayList<>();
            List<String> proxyNotes = new ArrayList<>();
            List<MoeTimingRig> rigs = new ArrayList<>();
            List<AutoCloseable> opened = new ArrayList<>(); // the buffers, then their rigs and baselines
            try {
                for (MoeConfig c : configs) {
                    buffers.add(MoeBuffer.create(world, c));
                    opened.add(buffers.get(buffers.size() - 1));
                }
                for (MoeBuffer moe : buffers) {
                    String rowNote = combineFromNote(combineFromHeap, moe.sizing());
                    if (!rowNotes.contains(rowNote)) {
                        rowNotes.add(rowNote);
                    }
                    table.header().put("rows_" + moe.config().dtype().name().toLowerCase(Locale.ROOT) + "_"
                            + rowsCell(moe.sizing()).replace('-', '_'), moe.highThroughputForm());
                    if (cmd.hasOption("check")) {
                        progress.step("check " + moe.config().dtype() + " " + rowsCell(moe.sizing()));
                        try (MoeReferenceCheck check = new MoeReferenceCheck(moe, combineFromHeap)) {
                            check.run(MoeRouting.Kind.UNIFORM, 1, MoeRouting.tokenCounts(ranks, maxTokens, new java.util.Random(1)));
                        }
                    }
                }
                List<MoeNcclBaseline> nccls = new ArrayList<>();
                List<MoeFrameworkNcclBaseline> frameworks = new ArrayList<>();
                for (int b = 0; b < buffers.size(); b++) {
                    MoeBuffer moe = buffers.get(b);
                    MoeTimingRig run = new MoeTimingRig(moe, combineFromHeap);
                    rigs.add(run);
                    opened.add(run);
                    blocksPerRank = run.blocksPerRank();
                    // The NCCL columns depend on the dispatch type only: the paths of one type share its baselines.
                    int same = b;
                    for (int e = 0; e < b; e++) {
                        if (buffers.get(e).config().dtype() == moe.config().dtype()) {
                            same = e;
                            break;
                        }
                    }
                    if (same < b) {
                        nccls.add(nccls.get(same));
                        frameworks.add(frameworks.get(same));
                        continue;
                    }
                    MoeNcclBaseline nccl = ncclMissing == null ? new MoeNcclBaseline(moe) : null;
                    opened.add(nccl);
                    nccls.add(nccl);
                    MoeFrameworkNcclBaseline framework = ncclMissing == null ? new MoeFrameworkNcclBaseline(moe) : null;
                    opened.add(framework);
                    frameworks.add(framework);
                }
                // Token count by token count, every buffer in turn: paths forced side by side (--rows sm,copy-engine)
                // are timed alternately, so a drift of the machine reaches both.
                for (int t : tokens) {
                    for (int b = 0; b < buffers.size(); b++) {
                        MoeBuffer moe = buffers.get(b);
                        MoeTimingRig run = rigs.get(b);
                        String rows = rowsCell(moe.sizing());
                        progress.step(moe.config().dtype() + " " + rows + " " + t + " tokens");
                        int[] perRank = new int[ranks];
                        Arrays.fill(perRank, t);
                        ProxyActivity[] before = proxyActivity(world);
                        MoeTimingRig.Timing timing = run.time(MoeRouting.Kind.UNIFORM, 7, perRank, warmup, iters);
                        proxyNote(world, before, warmup + iters, moe.config().dtype() + " " + rows + " " + t
                                + " tokens", percentile(timing.dispatchMillis(), 0.5)
                                + percentile(timing.combineMillis(), 0.5)).ifPresent(proxyNotes::add);
                        List<Object> row = new ArrayList<>(List.of(moe.config().dtype().name(), rows, t));
                        row.addAll(throughputCells(timing, ceilingGbps));
                        row.add(run.blocksPerRank());
                        MoeNcclBaseline.Timing base = nccls.get(b) == null ? null
                                : nccls.get(b).time(MoeRouting.Kind.UNIFORM, 7, perRank, warmup, iters);
                        row.addAll(ncclCells(base, ncclMissing, percentile(timing.dispatchMillis(), 0.5),
                                percentile(timing.combineMillis(), 0.5)));
                        MoeNcclBaseline.Timing fw = frameworks.get(b) == null ? null
                                : frameworks.get(b).time(MoeRouting.Kind.UNIFORM, 7, perRank, warmup, iters);
                        row.addAll(frameworkCells(fw, ncclMissing, percentile(timing.dispatchMillis(), 0.5),
                                percentile(timing.combineMillis(), 0.5)));
                        table.add(row.toArray());
                    }
                }
            } finally {
                closeAll(opened, 0);
            }
            progress.done();
            if (reporting) {
                table.note(placement(world, w));
            }
            table.note(timingNote(world, false));
            proxyNotes.forEach(table::note);
            table.note("GBps: the slowest rank's received bytes (dispatch) or sent-back BF16 bytes (combine), its own"
                    + " rows included, / its time; link_GBps: the most bytes a rank sent to ranks on another GPU / the"
                    + " slowest rank's median time; link_ratio = link_GBps / ce_ceiling");
            table.note(ceilingNote(ceiling, ranks));
            table.note(peerCopyNote(copyPeer, peerGbps));
            table.note(smsNote(configs.get(0).numChannels(), blocksPerRank,
                    world.localRanks().get(0).device().multiprocessorCount()));
            rowNotes.forEach(table::note);
            if (cmd.hasOption("comm-stream")) {
                table.note("calls on a communication stream per rank (--comm-stream); times include the fork from and"
                        + " the join to the rank's stream");
            }
            table.note(ncclMissing == null ? "nccl: NCCL " + NcclComms.version() + " from " + LibNccl.loadedFrom()
                    + ", all-to-all-v of the same routing, rows packed beforehand, one per (token, rank), NCCL's own"
                    + " channels (SMs not counted); x_nccl = NCCL median / gda4j median"
                    : "nccl: not run: " + ncclMissing);
            table.note(ncclMissing == null ? FRAMEWORK_NOTE : "fw: not run: " + ncclMissing);
        }
        if (reporting) {
            table.print(out, w.format);
        }
        return 0;
    }
}
