package io.gda4j.moe.ll;

import io.gda4j.moe.MoeConfig;
import io.gda4j.moe.TestProperties;
import io.gda4j.moe.tensor.ElementType;
import org.junit.jupiter.api.Test;

import static io.gda4j.moe.ll.LowLatencySizing.Protocol.COUNTED;
import static io.gda4j.moe.ll.LowLatencySizing.Protocol.TAGGED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The low-latency part's checks and LowLatencySizing's sizes, offsets and overflow refusals. */
class LowLatencySizingTest {
    /** A config with the low-latency part alone. */
    private static MoeConfig config(int hidden, int maxTokensPerRank, ElementType type, int experts, int topK) {
        return MoeConfig.lowLatencyBuilder().hidden(hidden).lowLatency(maxTokensPerRank, type).numExperts(experts)
                .topK(topK).build();
    }

    private static String refused(MoeConfig.Builder b) {
        return assertThrows(IllegalArgumentException.class, b::build).getMessage();
    }

    @Test
    void badConfigsAreRefusedNamingTheField() {
        MoeConfig ok = MoeConfig.deepEpLowLatencyBuilder().build();
        assertTrue(refused(ok.toBuilder().hidden(7000)).contains("multiple of 128"));
        assertTrue(refused(ok.toBuilder().topK(33)).contains("topK"));
        assertTrue(refused(ok.toBuilder().numExperts(4).topK(5)).contains("topK"));
        assertTrue(refused(ok.toBuilder().lowLatency(0, ElementType.FP8_E4M3)).contains("maxTokensPerRank"));
        assertTrue(refused(ok.toBuilder().lowLatency(128, ElementType.FP32)).contains("BF16 or FP8_E4M3"));
        assertTrue(refused(ok.toBuilder().lowLatency(128, ElementType.BF16).powerOfTwoScales(true)).contains("FP8"));
        String uneven = assertThrows(IllegalArgumentException.class, () -> ok.lowLatencySizing(3)).getMessage();
        assertTrue(uneven.contains("multiple of the world size"), uneven);
        assertThrows(IllegalArgumentException.class, () -> ok.lowLatencySizing(32));
    }

    @Test
    void deepEpShapeSizes() {
        LowLatencySizing s = MoeConfig.deepEpLowLatencyBuilder().build().lowLatencySizing(8);
        assertEquals(32, s.numLocalExperts());
        assertEquals(8 * 128, s.slotsPerExpert());
        assertEquals(7168, s.payloadBytes());
        assertEquals(56, s.scalesPerRow());
        long rows = 32L * 1024;
        assertEquals(0, s.recvX(0));
        assertEquals(rows * 7168, s.recvScales(0));
        assertEquals(rows * 7168 + rows * 224, s.recvSrc(0));
        assertEquals(s.bufferBytes() + s.recvSrc(0), s.recvSrc(1));
        assertEquals(s.signals(), s.combineInput(1) + rows * 2 * 7168, "the combine input ends buffer 1");
        assertEquals(2 * 32 * 8 + 2 * 256 + 6 * 8, s.signalWords(),
                "counts, flags, then both batch words and the tagged combine's flag per rank");
        assertTrue(s.heapBytes() >= s.signals() + 8L * s.signalWords() && s.heapBytes() % 256 == 0);
        for (long off : new long[] {s.recvX(1), s.recvScales(1), s.recvSrc(1), s.combineRecv(1), s.recvMsg(1),
                s.sendMsg(1), s.combineInput(1), s.bufferState(1), s.combined(), s.sendBase()}) {
            assertEquals(0, off % 256, "sections are 256-byte aligned");
        }
        assertTrue(s.bufferState(1) + s.stateBytes() <= s.deviceBytes());
        // A staged message: 16-byte record, 7168 FP8 codes, 56 scales = 7408 bytes, already a multiple of 16.
        assertTrue(s.staged());
        assertEquals(7408, s.msgBytes());
        // A count table (32 u64) takes one message slot: at the head of each source's part, and before the rows to
        // each rank in the send order (so one put carries table and rows).
        assertEquals(1, s.tableMsgs());
        assertEquals(align256((rows + 8) * 7408), s.sendMsg(0) - s.recvMsg(0), "each source's part: table, messages");
        assertEquals(align256((128L * 8 + 8) * 7408), s.tables(0) - s.sendMsg(0), "a gap per rank before its rows");
        assertEquals(8L * 32 * 8, s.combineStage(0) - s.tables(0), "a table filled per rank, u64 per expert");
        assertEquals(8L * 128 * 8 * 2 * 7168, s.combineInput(0) - s.combineStage(0),
                "per source: its tokens x the experts each may name here (top-8 of 32 local), BF16 rows");
    }

    @Test
    void worldsWithoutStagedPairsSpendNoHeapOnStaging() {
        MoeConfig c = MoeConfig.deepEpLowLatencyBuilder().build();
        LowLatencySizing staged = c.lowLatencySizing(2, true);
        LowLatencySizing direct = c.lowLatencySizing(2, false, COUNTED);
        assertFalse(staged.tagged() || direct.tagged(), "the counted protocol, asked for or forced by a staged pair");
        assertEquals(0, direct.msgBytes());
        assertEquals(direct.recvMsg(0), direct.sendMsg(0));
        assertEquals(direct.sendMsg(0), direct.tokenStage(0));
        assertEquals(direct.tokenStage(0) + 2L * 128 * 7392, direct.combineInput(0),
                "2 ranks, top-8: rows gathered, a stage row per (source, token) of FP8 payload and scales");
        long rows = 128L * 256;
        assertEquals(direct.combineInput(0) + rows * 2 * 7168, direct.bufferBytes(),
                "the combine input (every world has one: a pulling combine reads it)");
        assertEquals(staged.combineRecv(0), direct.combineRecv(0), "the sections every world uses stay put");
        // 2 ranks, 128 local experts: a table (1 KiB) takes one 7408-byte slot per part and per gap.
        assertEquals(1, staged.tableMsgs());
        assertEquals(0, direct.tableMsgs());
        long saved = 2 * (align256((rows + 2) * 7408) + align256((128L * 8 + 2) * 7408) + 2L * 128 * 8
                + 2L * 128 * 8 * 2 * 7168);
        assertEquals(saved, staged.heapBytes() - direct.heapBytes(), "both buffers' staging, 256-aligned already");
        assertEquals(staged.heapBytes(), c.lowLatencySizing(2)
                .heapBytes(), "the one-argument sizing is the worst case");
        assertTrue(c.lowLatencySizing(2, false, TAGGED).heapBytes() < staged.heapBytes(),
                "the tagged sections take less than staging");
        // BF16 rows of hidden 128 (256 bytes) with no scales: 272-byte messages; FP8 hidden 128: 16 + 128 + 4 -> 160.
        assertEquals(272, config(128, 4, ElementType.BF16, 4, 2).lowLatencySizing(2, true).msgBytes());
        assertEquals(160, config(128, 4, ElementType.FP8_E4M3, 4, 2).lowLatencySizing(2, true).msgBytes());
    }

    @Test
    void rowsAreGatheredWhereATokenHasSeveralExpertsPerRank() {
        MoeConfig deepEp = MoeConfig.deepEpLowLatencyBuilder().build();
        assertFalse(deepEp.lowLatencySizing(2, false, TAGGED).gathersRows(),
                "the tagged protocol sends a row per (token, rank) anyway: no token stage");
        assertTrue(deepEp.lowLatencySizing(2).gathersRows(), "top-8 over 2 ranks: about 4 experts of a token per rank");
        assertTrue(deepEp.lowLatencySizing(4).gathersRows(), "top-8 over 4 ranks: about 2");
        assertFalse(deepEp.lowLatencySizing(8).gathersRows(), "top-8 over 8 ranks: about 1, nothing to gather");
        assertEquals(0, deepEp.lowLatencySizing(8).stageRowBytes());
        assertEquals(deepEp.lowLatencySizing(8).tokenStage(0), deepEp.lowLatencySizing(8)
                .combineInput(0), "no stage, no bytes");
        assertFalse(config(128, 4, ElementType.BF16, 4, 2).lowLatencySizing(1).gathersRows(),
                "one rank has no other rank to gather for");
        // BF16 hidden 128: 256 bytes a row, no scales.
        assertEquals(256, config(128, 4, ElementType.BF16, 4, 4).lowLatencySizing(2, true).stageRowBytes());
        String was = System.getProperty(LowLatencySizing.GATHER_ROWS_PROP_NAME);
        try {
            System.setProperty(LowLatencySizing.GATHER_ROWS_PROP_NAME, "true");
            assertTrue(deepEp.lowLatencySizing(8).gathersRows(), "forced on");
            System.setProperty(LowLatencySizing.GATHER_ROWS_PROP_NAME, "false");
            assertFalse(deepEp.lowLatencySizing(2).gathersRows(), "forced off");
            System.setProperty(LowLatencySizing.GATHER_ROWS_PROP_NAME, "sometimes");
            String msg = assertThrows(IllegalArgumentException.class, () -> deepEp.lowLatencySizing(2)).getMessage();
            assertTrue(msg.contains(LowLatencySizing.GATHER_ROWS_PROP_NAME) && msg.contains("auto, true or false"),
                    msg);
        } finally {
            if (was == null) {
                System.clearProperty(LowLatencySizing.GATHER_ROWS_PROP_NAME);
            } else {
                System.setProperty(LowLatencySizing.GATHER_ROWS_PROP_NAME, was);
            }
        }
    }

    @Test
    void signalWordsNameTheirPeer() {
        LowLatencySizing s = config(128, 4, ElementType.BF16, 12, 2).lowLatencySizing(4);
        assertEquals(23, s.dispatchCountWord(1, 2, 3));
        assertEquals(43, s.combineFlagWord(1, 7));
        LowLatencySizing.SignalWord d = s.signalWord(8L * s.dispatchCountWord(1, 2, 3));
        assertEquals(new LowLatencySizing.SignalWord("low-latency dispatch count", 1, 3, 2), d);
        LowLatencySizing.SignalWord f = s.signalWord(8L * s.combineFlagWord(1, 7));
        assertEquals(new LowLatencySizing.SignalWord("low-latency combine flag", 1, 2, 7), f);
        assertEquals(new LowLatencySizing.SignalWord("low-latency dispatch batch", 1, 2, -1),
                s.signalWord(8L * s.dispatchBatchWord(1, 2)));
        assertEquals(new LowLatencySizing.SignalWord("low-latency combine batch", 0, 3, -1),
                s.signalWord(8L * s.combineBatchWord(0, 3)));
        assertEquals(new LowLatencySizing.SignalWord("low-latency combine flag", 1, 3, -1),
                s.signalWord(8L * s.combineRankFlagWord(1, 3)));
        assertEquals(s.combineRankFlagWord(1, 3) + 1, s.signalWords(), "the last word");
        assertEquals(null, s.signalWord(8L * s.signalWords()));
        assertEquals(null, s.signalWord(4));
        assertEquals(s.signalWord(8L * s.combineFlagWord(1, 7)), s.wordAt(s.signals() + 8L * s.combineFlagWord(1, 7)));
    }

    /**
     * The tagged protocol's choice and layout: it runs where it is asked for and every pair is direct (unless a word
     * per (source, local expert) would not fit a block's shared memory), and a timed-out wait on any of its words
     * names the source that did not write it.
     */
    @Test
    void theTaggedProtocolRunsWhereAskedForAndItsWordsNameTheirSource() {
        MoeConfig c = MoeConfig.deepEpLowLatencyBuilder().build();
        LowLatencySizing s = c.lowLatencySizing(2, false, TAGGED);
        assertTrue(s.tagged());
        assertFalse(c.lowLatencySizing(2, true, TAGGED).tagged(), "a staged pair: counted");
        assertFalse(c.lowLatencySizing(2, true).tagged(), "a staged pair: counted, by default too");
        assertTrue(TestProperties.with(LowLatencySizing.PROTOCOL_PROP_NAME, null,
                () -> c.lowLatencySizing(2, false)).tagged(), "tagged by default where every pair is direct");
        assertFalse(TestProperties.with(LowLatencySizing.PROTOCOL_PROP_NAME, "counted",
                () -> c.lowLatencySizing(2, false)).tagged(), "counted where the property asks for it");
        assertTrue(TestProperties.with(LowLatencySizing.PROTOCOL_PROP_NAME, " Tagged ",
                () -> c.lowLatencySizing(2, false)).tagged(), "asked for by the property");
        String msg = assertThrows(IllegalArgumentException.class, () -> TestProperties.with(
                LowLatencySizing.PROTOCOL_PROP_NAME, "fast", () -> c.lowLatencySizing(2, false))).getMessage();
        assertTrue(msg.contains(LowLatencySizing.PROTOCOL_PROP_NAME) && msg.contains("counted or tagged"), msg);
        assertFalse(c.toBuilder().numExperts(2 * 6200).build().lowLatencySizing(2, false, TAGGED).tagged(),
                "2 x 6201 words of shared memory are past 48 KiB");
        assertTrue(c.toBuilder().numExperts(2 * 6000).build().lowLatencySizing(2, false, TAGGED).tagged());
        // 128 local experts: the rows to this rank, the rows below, 128 counts = 130 words. A row: the token and 8
        // places (10 words, even), 14 chunks of 128 words, 56 scales: 1858 words (14864 bytes for 7392 of data).
        assertEquals(130, s.tagCountWords());
        assertEquals(10, s.tagHeaderWords());
        assertEquals(10 + 14 * 128, s.tagScaleWord());
        assertEquals(1858, s.tagRowWords());
        assertEquals(10 + 14 * 256, c.toBuilder().lowLatency(128, ElementType.BF16).build()
                .lowLatencySizing(2, false, TAGGED).tagRowWords(), "BF16: twice the payload words, no scales");
        assertEquals(0, s.stageRowBytes());
        assertEquals(s.tagCounts(0) + 2304, s.tagRows(0), "2 x 130 words, 256-aligned");
        assertEquals(s.tagRows(0) + 2L * 128 * 14864, s.combineInput(0));
        for (long off : new long[] {s.tagCounts(1), s.tagRows(1)}) {
            assertEquals(0, off % 256, "sections are 256-byte aligned");
        }
        assertEquals(new LowLatencySizing.SignalWord("low-latency dispatch counts", 1, 1, -1, true),
                s.wordAt(s.tagCounts(1) + 8L * 130 + 16));
        assertEquals(new LowLatencySizing.SignalWord("low-latency dispatch row 5", 0, 1, -1, true),
                s.wordAt(s.tagRows(0) + (128L + 5) * 14864 + 8));
        assertEquals(new LowLatencySizing.SignalWord("low-latency dispatch row 127", 1, 0, -1, true),
                s.wordAt(s.tagRows(1) + 127L * 14864 + 14864 - 8));
        assertEquals(null, s.wordAt(s.recvX(0)), "a row of the output is no word anyone waits for");
        assertEquals(null, s.wordAt(s.tagCounts(0) + 4), "misaligned");
        LowLatencySizing staged = c.lowLatencySizing(2, true);
        assertEquals(null, staged.wordAt(staged.tagCounts(0)), "no tagged sections");
        assertTrue(c.lowLatencySizing(2).heapBytes() >= s.heapBytes(),
                "the one-argument sizing covers the tagged protocol too");
        MoeConfig small = config(128, 4, ElementType.BF16, 4, 4);
        assertEquals(small.lowLatencySizing(2, false, TAGGED).heapBytes(), small.lowLatencySizing(2).heapBytes(),
                "where tagged rows (one per source and token) outweigh staging (2 local experts), they are the most");
    }

    /**
     * The tagged receive's work: a row in segments of TAG_SEGMENT_PAIRS pairs a lane (4 FP8 chunks, 2 BF16), a warp
     * each, and one warp for this rank's own row (its header alone); the host sizes the receive's grid by them.
     */
    @Test
    void aTaggedRowIsReceivedInSegmentsOfAWarpEach() {
        MoeConfig c = MoeConfig.deepEpLowLatencyBuilder().build();
        LowLatencySizing fp8 = c.lowLatencySizing(2, false, TAGGED);
        assertEquals(8, MoeLowLatencyParamsDescriptor.TAG_SEGMENT_PAIRS);
        assertEquals(4, fp8.tagSegments(), "14 chunks of 512 FP8 channels, 4 a segment");
        assertEquals(5, fp8.tagWarpsPerRowIndex(), "the other rank's 4 segments and this rank's header");
        assertEquals(29, c.lowLatencySizing(8, false, TAGGED).tagWarpsPerRowIndex(), "7 other ranks x 4 + 1");
        assertEquals(1, c.lowLatencySizing(1, false, TAGGED).tagWarpsPerRowIndex(), "one rank: its own rows");
        LowLatencySizing bf16 = c.toBuilder().lowLatency(128, ElementType.BF16).build()
                .lowLatencySizing(2, false, TAGGED);
        assertEquals(7, bf16.tagSegments(), "14 chunks of 512 BF16 channels, 2 a segment");
        assertEquals(1, config(384, 4, ElementType.FP8_E4M3, 4, 2).lowLatencySizing(2, false, TAGGED).tagSegments(),
                "hidden 384: one chunk, not even full");
        assertEquals(2, config(1536, 4, ElementType.BF16, 4, 2).lowLatencySizing(2, false, TAGGED).tagSegments(),
                "3 BF16 chunks: 2 segments, the second of one chunk");
    }

    @Test
    void overflowingSizesAreRefusedNamingTheQuantity() {
        String slots = assertThrows(IllegalArgumentException.class,
                () -> config(128, Integer.MAX_VALUE / 2, ElementType.BF16, 16, 1).lowLatencySizing(4)).getMessage();
        assertTrue(slots.contains("slots per expert"), slots);
        String bytes = assertThrows(IllegalArgumentException.class,
                () -> config(1 << 30, 1 << 20, ElementType.BF16, 1 << 10, 1).lowLatencySizing(1)).getMessage();
        assertTrue(bytes.contains("too large"), bytes);
    }

    private static long align256(long bytes) {
        return (bytes + 255) & -256L;
    }
}
