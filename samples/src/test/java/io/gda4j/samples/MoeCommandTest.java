package io.gda4j.samples;

import io.gda4j.moe.MoeConfig;
import io.gda4j.moe.ll.LowLatencySizing;
import io.gda4j.samples.moe.CopyEngineCeiling;
import io.gda4j.samples.moe.MoeNcclBaseline;
import io.gda4j.samples.moe.MoeTimingRig;
import org.apache.commons.cli.CommandLine;
import org.apache.commons.cli.DefaultParser;
import org.apache.commons.cli.ParseException;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MoeCommandTest {
    @Test
    void tokenListsAndRanges() {
        assertEquals(List.of(128, 256, 512, 1024, 2048, 4096, 8192), MoeCommand.tokenList("128:8192"));
        assertEquals(List.of(4096, 100), MoeCommand.tokenList("4096, 100"));
        assertThrows(UsageException.class, () -> MoeCommand.tokenList("0"));
        assertThrows(UsageException.class, () -> MoeCommand.tokenList("8:4"));
        assertThrows(UsageException.class, () -> MoeCommand.tokenList("many"));
        assertEquals("--tokens '128,128' names 128 twice",
                assertThrows(UsageException.class, () -> MoeCommand.tokenList("128,128")).getMessage());
        assertEquals("--tokens accepts whole numbers from 1 to 65536, a list (128,4096) or a doubling range "
                + "(128:8192), got '1:99999999'",
                assertThrows(UsageException.class, () -> MoeCommand.tokenList("1:99999999")).getMessage());
        assertThrows(UsageException.class, () -> MoeCommand.tokenList("1:2:4"));
        assertThrows(UsageException.class, () -> MoeCommand.tokenList("128,,256"));
    }

    @Test
    void percentiles() {
        double[] v = {5, 1, 4, 2, 3};
        assertEquals(3, MoeCommand.percentile(v, 0.5));
        assertEquals(5, MoeCommand.percentile(v, 0.99));
    }

    @Test
    void theNcclColumnSaysWhyInAFewWords() {
        assertEquals("NCCL not found", MoeCommand.ncclColumn("NCCL not found (tried libnccl.so.2: cannot open); set X"));
        assertEquals("NCCL needs one GPU per rank",
                MoeCommand.ncclColumn("NCCL needs one GPU per rank: ranks 0 and 1 share GPU 0"));
        assertEquals(List.of("NCCL not found", "-", "-", "-", "-", "-"),
                MoeCommand.ncclCells(null, "NCCL not found (tried libnccl.so.2: cannot open)", 0.5, 0.25),
                "a row without NCCL: the reason's first clause, then dashes");
    }

    @Test
    void helpTeachesTheBandwidthDefinition() {
        CliRun r = CliRun.of("moe", "--help");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("DeepEP's"), r.out());
        assertTrue(r.out().contains("--tokens"), r.out());
        assertTrue(r.out().contains("GDA4J_NCCL_LIBRARY"), r.out());
    }

    @Test
    void badOptionsAreUsageErrors() {
        assertEquals(2, CliRun.of("moe", "--dtype", "fp16").code());
        assertEquals(2, CliRun.of("moe", "--topk", "0").code());
    }

    @Test
    void lowLatencyModeIsDocumentedAndItsOptionsCheckedBeforeAnyGpuWork() {
        CliRun help = CliRun.of("moe", "--help");
        assertTrue(help.out().contains("--mode low-latency"), help.out());
        assertTrue(help.out().contains("UE8M0"), help.out());
        CliRun mode = CliRun.of("moe", "--mode", "fast");
        assertEquals(2, mode.code());
        assertTrue(mode.err().contains("high-throughput or low-latency"), mode.err());
        CliRun hidden = CliRun.of("moe", "--mode", "low-latency", "--hidden", "100");
        assertEquals(2, hidden.code());
        assertTrue(hidden.err().contains("multiple of 128"), hidden.err());
        CliRun pow2 = CliRun.of("moe", "--mode", "low-latency", "--dtype", "bf16", "--pow2-scales");
        assertEquals(2, pow2.code());
        assertTrue(pow2.err().contains("--pow2-scales applies to FP8"), pow2.err());
        assertEquals(2, CliRun.of("moe", "--mode", "low-latency", "--dtype", "fp16").code());
        assertEquals(2, CliRun.of("moe", "--mode", "low-latency", "--topk", "33").code());
    }

    @Test
    void theCommunicationStreamOptionIsDocumentedAndRefusedInLowLatencyMode() {
        CliRun help = CliRun.of("moe", "--help");
        assertTrue(help.out().contains("--comm-stream"), help.out());
        assertTrue(help.out().contains("communication stream per rank"), help.out());
        assertTrue(readme().contains("the times then include that fork and join"), "README.md");
        CliRun ll = CliRun.of("moe", "--mode", "low-latency", "--comm-stream");
        assertEquals(2, ll.code());
        assertTrue(ll.err().contains("--comm-stream applies to --mode high-throughput"), ll.err());
        CliRun rows = CliRun.of("moe", "--mode", "low-latency", "--rows", "sm");
        assertEquals(2, rows.code());
        assertTrue(rows.err().contains("--rows applies to --mode high-throughput"), rows.err());
        CliRun bad = CliRun.of("moe", "--rows", "dma");
        assertEquals(2, bad.code());
        assertTrue(bad.err().contains("--rows must be auto, sm or copy-engine, or a list of them (sm,copy-engine),"
                + " got dma"), bad.err());
        assertTrue(help.out().contains("--rows"), help.out());
        assertTrue(readme().contains("`--rows copy-engine`"), "README.md");
    }

    /** The buffers, rigs and baselines of a run close newest first, all of them, the first failure thrown. */
    @Test
    void closeAllClosesNewestFirstEveryOneAndKeepsTheFailures() {
        List<String> closed = new java.util.ArrayList<>();
        List<AutoCloseable> all = new java.util.ArrayList<>();
        all.add(() -> closed.add("buffer"));
        all.add(null);
        all.add(() -> {
            closed.add("rig");
            throw new IllegalStateException("rig");
        });
        all.add(() -> {
            closed.add("baseline");
            throw new java.io.IOException("baseline");
        });
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> MoeCommand.closeAll(all, 0));
        assertEquals(List.of("baseline", "rig", "buffer"), closed);
        assertTrue(e.getCause() instanceof java.io.IOException, String.valueOf(e));
        assertEquals("rig", e.getSuppressed()[0].getMessage());
    }

    /**
     * --rows takes a list, timed in turn at every token count (the old and the new form over the proxy side by side),
     * each path once; --help says what sm and copy-engine mean over the proxy, and the README which form a world gets.
     */
    @Test
    void rowsTakesAListOfPathsEachOnceAndHelpSaysWhatTheyAreOverTheProxy() {
        CliRun twice = CliRun.of("moe", "--rows", "sm,copy-engine,sm");
        assertEquals(2, twice.code());
        assertTrue(twice.err().contains("--rows names sm twice"), twice.err());
        CliRun empty = CliRun.of("moe", "--rows", "sm,");
        assertEquals(2, empty.code());
        assertTrue(empty.err().contains("got an empty entry"), empty.err());
        String help = CliRun.of("moe", "--help").out().replaceAll("\\s+", " ");
        assertTrue(help.contains("or sm,copy-engine; proxy: sm = rings"), help);
        assertTrue(readme().contains("--rows sm,copy-engine"), "README.md teaches the A/B run");
        io.gda4j.moe.MoeConfig auto = io.gda4j.moe.MoeConfig.deepEpBuilder().build();
        io.gda4j.moe.MoeConfig sm = auto.toBuilder().rowPath(io.gda4j.moe.ht.MoeRowPath.SM).build();
        io.gda4j.moe.MoeConfig ce = auto.toBuilder().rowPath(io.gda4j.moe.ht.MoeRowPath.COPY_ENGINE).build();
        assertEquals("host-transfers", MoeCommand.rowsCell(auto.sizing(2, io.gda4j.moe.ht.PeerPaths.HOST_TRANSFERS)));
        assertEquals("rings", MoeCommand.rowsCell(sm.sizing(2, io.gda4j.moe.ht.PeerPaths.HOST_TRANSFERS)));
        assertEquals("sm", MoeCommand.rowsCell(auto.sizing(2, io.gda4j.moe.ht.PeerPaths.DIRECT)));
        assertEquals("copy-engine", MoeCommand.rowsCell(ce.sizing(2, io.gda4j.moe.ht.PeerPaths.DIRECT)));
    }

    /** Two ranks, 3 iterations; rank 0 received 2e6 bytes (1e6 of them its own rows) and sent 0.5e6 over the link. */
    private static MoeTimingRig.Timing timing(long dispatchLinkBytes, long combineLinkBytes) {
        return new MoeTimingRig.Timing(new double[] {0.5, 0.4, 0.6}, new double[] {0.25, 0.2, 0.3},
                new long[] {2_000_000, 1_800_000}, new long[] {1_000_000, 900_000},
                new long[] {dispatchLinkBytes, dispatchLinkBytes / 2}, new long[] {combineLinkBytes, 0});
    }

    @Test
    void linkBandwidthIsTheCrossingBytesOverTheSlowestRanksMedianBesideTheCopyEngines() {
        List<Object> cells = MoeCommand.throughputCells(timing(500_000, 250_000), 400.0);
        assertEquals(MoeCommand.THROUGHPUT_COLUMNS.indexOf("combine_link_ratio")
                - MoeCommand.THROUGHPUT_COLUMNS.indexOf("dispatch_ms") + 1, cells.size(), "dispatch_ms..combine_link_ratio");
        assertEquals(0.5, (double) cells.get(0), 1e-12, "dispatch median");
        assertEquals(0.6, (double) cells.get(1), 1e-12, "dispatch p99");
        assertEquals(4.0, (double) cells.get(2), 1e-12, "DeepEP's GBps: the most received bytes, own rows included");
        assertEquals(1.0, (double) cells.get(3), 1e-12, "link: 500 kB crossed in 0.5 ms");
        assertEquals(1.0 / 400, (double) cells.get(4), 1e-12, "link / the copy engines' ceiling");
        assertEquals(0.25, (double) cells.get(5), 1e-12, "combine median");
        assertEquals(4.0, (double) cells.get(7), 1e-12, "1 MB of BF16 rows back in 0.25 ms");
        assertEquals(1.0, (double) cells.get(8), 1e-12, "combine link: 250 kB in 0.25 ms");
    }

    @Test
    void withoutTwoGpusTheLinkCellsSaySoInsteadOfZero() {
        List<Object> oneGpu = MoeCommand.throughputCells(timing(0, 0), Double.NaN);
        assertEquals(List.of("-", "-"), List.of(oneGpu.get(3), oneGpu.get(4)));
        assertEquals(List.of("-", "-"), List.of(oneGpu.get(8), oneGpu.get(9)));
        List<Object> noCopy = MoeCommand.throughputCells(timing(500_000, 250_000), Double.NaN);
        assertEquals(1.0, (double) noCopy.get(3), 1e-12);
        assertEquals("-", noCopy.get(4), "no ceiling, no ratio");
    }

    @Test
    void theTableCarriesTheLinkColumnsAndTheNotesTheReferenceAndTheSms() {
        ResultTable t = new ResultTable("moe", MoeCommand.THROUGHPUT_COLUMNS);
        List<Object> row = new java.util.ArrayList<>(List.of("BF16", "host-transfers", 4096));
        row.addAll(MoeCommand.throughputCells(timing(500_000, 250_000), 2.0));
        row.add(24);
        row.addAll(MoeCommand.ncclCells(new MoeNcclBaseline.Timing(new double[] {1.0, 1.0, 1.0},
                new double[] {0.5, 0.5, 0.5}), null, 0.5, 0.25));
        row.addAll(MoeCommand.frameworkCells(new MoeNcclBaseline.Timing(new double[] {1.5, 1.5, 1.5},
                new double[] {1.0, 1.0, 1.0}), null, 0.5, 0.25));
        assertEquals(MoeCommand.THROUGHPUT_COLUMNS.size(), row.size(), "a cell per column");
        t.add(row.toArray());
        t.note(MoeCommand.peerCopyNote(1, 394.06));
        t.note(MoeCommand.ceilingNote(new CopyEngineCeiling.Result(4L * (32L << 20) * 7, new double[] {2.0, 2.0, 2.0}),
                8));
        t.note(MoeCommand.smsNote(24, 48, 132));
        String text = ResultTableTest.print(t, ResultTable.Format.TABLE);
        List<String> lines = text.lines().toList();
        for (String column : List.of("dispatch_link_GBps", "dispatch_link_ratio", "combine_link_GBps",
                "combine_link_ratio", "dispatch_x_nccl", "sms", "fw_dispatch_ms", "dispatch_x_fw", "combine_x_fw")) {
            assertTrue(lines.get(1).contains(column), lines.get(1));
        }
        assertTrue(text.contains("memcpyPeer: 394.1 GB/s one way, rank 0's GPU -> rank 1's GPU, nothing else moving"
                + " (cuMemcpyPeerAsync of 256 MiB, median of 5, in this run)"), text);
        assertTrue(text.contains("ce_ceiling: 469.8 GB/s per rank, every rank copying 32 MiB to every rank on another"
                + " GPU at once, both directions busy"), text);
        assertTrue(text.contains("24 channels per rank; each dispatch and each combine runs 48 thread blocks per rank"
                + " (2 per channel), one per SM: 48 of the GPU's 132 SMs"), text);
        String json = ResultTableTest.print(t, ResultTable.Format.JSON);
        assertTrue(json.contains("\"dispatch_link_GBps\":1.0,\"dispatch_link_ratio\":0.5"), json); // in full
        assertTrue(json.contains("\"dispatch_x_nccl\":2.0"), json);
        assertTrue(json.contains("\"fw_dispatch_ms\":1.5,\"dispatch_x_fw\":3.0"), json);
        assertTrue(json.contains("\"sms\":24"), json);
        assertEquals(List.of("NCCL not found", "-", "-", "-"), MoeCommand.frameworkCells(null, "NCCL not found (tried"
                + " x): y", 0.5, 0.25), "without NCCL the framework cells say why");
        assertTrue(MoeCommand.ceilingNote(null, 2).contains("not measured"));
        assertTrue(MoeCommand.peerCopyNote(-1, Double.NaN).contains("not measured: every rank shares rank 0's GPU"));
        assertTrue(MoeCommand.lowLatencySmsNote(132, 128, 132).contains("132 of 132 SMs"));
        MoeConfig deepEp = MoeConfig.deepEpLowLatencyBuilder().build();
        String tagged = MoeCommand.lowLatencyDispatchNote(deepEp.lowLatencySizing(2, false,
                LowLatencySizing.Protocol.TAGGED));
        assertTrue(tagged.startsWith("protocol: tagged (the default, every pair p2p or self)"), tagged);
        assertTrue(tagged.contains("-Dgda4j.moe.oneKernelDispatch=auto|true|false"), tagged);
        assertTrue(MoeCommand.lowLatencyDispatchNote(deepEp.lowLatencySizing(2, false, LowLatencySizing.Protocol.COUNTED))
                .startsWith("protocol: counted (-D" + LowLatencySizing.PROTOCOL_PROP_NAME + "=counted; the tagged one"
                        + " is the default)"));
        String gathered = MoeCommand.lowLatencyDispatchNote(deepEp.lowLatencySizing(2, true));
        assertTrue(gathered.startsWith("protocol: counted (the world has a proxy or ibgda pair)"), gathered);
        assertTrue(gathered.contains("once to each other rank that has its experts, into that rank's token stage"),
                gathered);
        assertTrue(gathered.contains("fewer than 64 tokens"), gathered);
        assertTrue(MoeCommand.lowLatencyDispatchNote(deepEp.lowLatencySizing(8, true)).contains("once per expert into the"
                + " expert's slots (rows are gathered per rank where topK >= 2 x ranks)"
                + " (-Dgda4j.moe.gatherRows=auto|true|false)"));
        assertEquals("heap per rank at 8 ranks, 128 tokens: 1.38 GiB tagged, 1.35 counted, 2.04 proxy/ibgda",
                MoeCommand.lowLatencyHeapNote());
        assertTrue(MoeCommand.lowLatencyCombineFromNote(true, false).contains("reads its tokens' rows from the experts'"
                + " ranks as it sums them (--combine-from heap)"));
        assertTrue(MoeCommand.lowLatencyCombineFromNote(true, true).contains("return the rows (the world has a proxy"
                + " or ibgda pair)"), "a staged world pushes even from the combine input");
        assertTrue(MoeCommand.lowLatencyCombineFromNote(false, false).contains("in a tensor of each rank's own; the"
                + " experts' ranks return the rows, then each rank sums them (--combine-from tensor)"));
    }

    /** README.md as a reader sees it: line breaks and indents as single spaces. */
    private static String readme() {
        try {
            return java.nio.file.Files.readString(ReadmeSnippetsTest.readme()).replaceAll("\\s+", " ");
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void theReadmeSaysHowTimesAreTakenInOneProcessAndUnderALauncher() {
        String readme = readme();
        assertTrue(readme.contains("**One process** (no launcher)"), "README.md");
        assertTrue(readme.contains("**Under a launcher**"), "README.md");
        assertTrue(readme.contains("start line on the GPU"), "README.md");
        assertTrue(readme.contains("the skew between the launches is not counted"), "README.md");
        assertTrue(readme.contains("**link_GBps**") && readme.contains("**memcpyPeer**"), "README.md");
        assertTrue(readme.contains("**ce_ceiling**") && readme.contains("**fw**"), "README.md");
        assertTrue(readme.contains("`ncclCommInitRank` in each process"), "README.md");
        assertTrue(readme.contains("two thread blocks per channel"), "README.md");
    }

    @Test
    void configRefusalsNameTheOptionsNotTheJavaFields() {
        CliRun hidden = CliRun.of("moe", "--hidden", "100");
        assertEquals(2, hidden.code(), hidden::toString);
        assertTrue(hidden.err().contains("--hidden must be a multiple of"), hidden::toString);
        assertFalse(hidden.err().contains("MoeConfig"), hidden::toString);
        CliRun topk = CliRun.of("moe", "--topk", "8", "--experts", "3");
        assertEquals("gda4j moe: --topk accepts 1 to 3 (at most --experts 3 and 32), got '8'. Run 'gda4j moe --help'."
                + System.lineSeparator(), topk.err());
        assertEquals("--chunk (64) must not exceed --ring (32)",
                MoeCommand.optionWords("MoeConfig chunkTokens (64) must not exceed ringTokens (32)"));
        assertEquals("--experts must be > 0, got 0", MoeCommand.optionWords("MoeConfig numExperts must be > 0, got 0"));
    }

    @Test
    void helpIsShortAndTheDetailsAreInTheReadme() throws Exception {
        CliRun help = CliRun.of("moe", "--help");
        assertEquals(0, help.code(), help::toString);
        long lines = help.out().lines().count();
        assertTrue(lines <= 60, lines + " lines (72 before the details moved to the README):\n" + help.out());
        // The description: the paragraph after the summary line, before the options.
        String description = help.out().split("\\R\\R")[2];
        assertTrue(description.startsWith("Every rank"), description);
        assertTrue(description.lines().count() <= 12, description.lines().count() + " lines: " + description);
        String readme = readme();
        assertTrue(help.out().replaceAll("\\s+", " ").contains("How gda4j moe measures")
                && readme.contains("### How `gda4j moe` measures"),
                "the help points to the README's section");
        for (String column : List.of("link_GBps", "memcpyPeer", "link_ratio", "x_nccl", "start line")) {
            assertTrue(readme.contains(column), column + " is explained in the README");
        }
    }

    private static CommandLine moe(String... args) throws ParseException {
        return new DefaultParser().parse(new MoeCommand().options(), args);
    }

    /** Each option has one default, the library's, which the parser takes and the help prints. */
    @Test
    void theDefaultsAreTheLibrarysAndTheHelpPrintsThem() throws ParseException {
        CommandLine none = moe();
        MoeCommand.Model model = MoeCommand.Model.parse(none);
        MoeCommand.Sweep sweep = MoeCommand.Sweep.parse(none, false);
        MoeConfig want = MoeConfig.deepEpBuilder().build();
        MoeConfig got = MoeCommand.highThroughputConfigs(none, model, sweep.maxTokens(), false).get(0);
        assertEquals(want.toString(), got.toString(), "every high-throughput default is MoeConfig's");
        MoeConfig proxy = MoeCommand.highThroughputConfigs(none, model, sweep.maxTokens(), true).get(0);
        assertEquals(MoeConfig.Builder.FEW_PUTS_RING_TOKENS, proxy.ringTokens());
        assertEquals(MoeConfig.Builder.FEW_PUTS_CHUNK_TOKENS, proxy.chunkTokens());
        MoeConfig ll = MoeCommand.lowLatencyConfigs(none, model, MoeCommand.Sweep.parse(none, true).maxTokens()).get(0);
        assertEquals(MoeConfig.deepEpLowLatencyBuilder().build().toString(), ll.toString(),
                "every low-latency default is MoeConfig's");
        String help = CliRun.of("moe", "--help").out().replaceAll("\\s+", " ");
        for (String words : List.of("(default " + MoeConfig.Builder.DEFAULT_CHANNELS + ":",
                "(default " + MoeConfig.Builder.DEFAULT_RING_TOKENS + "; proxy: " + MoeConfig.Builder.FEW_PUTS_RING_TOKENS,
                "(default " + MoeConfig.Builder.DEFAULT_CHUNK_TOKENS + "; proxy: " + MoeConfig.Builder.FEW_PUTS_CHUNK_TOKENS,
                "(default " + MoeConfig.DEEP_EP_TOKENS + "; low-latency: " + MoeConfig.DEEP_EP_LOW_LATENCY_TOKENS,
                "hidden size (default " + MoeConfig.DEEP_EP_HIDDEN + ")",
                "experts (default " + MoeConfig.DEEP_EP_EXPERTS + ")",
                "experts per token (default " + MoeConfig.DEEP_EP_TOP_K + ")")) {
            assertTrue(help.contains(words), words + " in: " + help);
        }
        assertEquals(12, MoeCommand.Model.parse(moe("--topk", "12")).topK(), "--topk parsed once, into the model");
    }
}
