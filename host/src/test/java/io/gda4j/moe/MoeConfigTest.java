package io.gda4j.moe;

import io.gda4j.moe.core.ExactSizes;
import io.gda4j.moe.ht.MoeRowPath;
import io.gda4j.moe.ht.HighThroughputRank;
import io.gda4j.moe.ht.HighThroughputSizing;
import io.gda4j.moe.ht.MoeChannels;
import io.gda4j.moe.ht.PeerPaths;
import io.gda4j.moe.tensor.ElementType;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MoeConfigTest {
    private static MoeConfig.Builder small() {
        return MoeConfig.builder().hidden(256).maxTokensPerRank(64).numExperts(8).topK(2).numChannels(2)
                .chunkTokens(4).ringTokens(8).combineWarps(4);
    }

    private static String ringProblem(MoeConfig.Builder b) {
        return b.build().highThroughputPart().ringProblem();
    }

    @Test
    void ringsTooSmallForAChunkAndACombineRoundAreNamed() {
        // The defaults, the proxy defaults of gda4j moe, and the edge: chunk + warps - 1 == ring.
        assertEquals(null, ringProblem(MoeConfig.deepEpBuilder()));
        assertEquals(null, ringProblem(MoeConfig.deepEpBuilder().chunkTokens(128).ringTokens(512)));
        assertEquals(null, ringProblem(MoeConfig.deepEpBuilder().chunkTokens(49).ringTokens(64).combineWarps(16)));
        assertEquals(null, ringProblem(MoeConfig.deepEpBuilder().chunkTokens(1).ringTokens(1).combineWarps(1)));
        String p = ringProblem(MoeConfig.deepEpBuilder().chunkTokens(64).ringTokens(64).combineWarps(16));
        assertTrue(p.startsWith("MoeConfig chunkTokens (64) + combineWarps (16) - 1 must not exceed ringTokens (64)"), p);
        assertTrue(p.contains("Raise ringTokens to at least 79"), p);
    }

    @Test
    void aLowLatencyPartRoutesTheSameModelAndCountsInTheHeap() {
        MoeConfig ll = MoeConfig.deepEpLowLatencyBuilder().build();
        MoeConfig both = MoeConfig.deepEpBuilder().lowLatency(128, ElementType.FP8_E4M3).build();
        assertTrue(both.hasHighThroughput() && both.hasLowLatency());
        assertEquals(both.sizing(8).heapBytes() + ll.lowLatencySizing(8).heapBytes(), both.heapBytes(8));
        assertEquals(both.toString(), both.toBuilder().build().toString(), "toBuilder keeps both parts");
        assertTrue(both.toString().contains("lowLatency={maxTokensPerRank=128, dispatchType=FP8_E4M3"),
                both.toString());
        MoeConfig alone = MoeConfig.deepEpBuilder().build();
        assertFalse(alone.hasLowLatency());
        assertEquals(alone.sizing(8).heapBytes(), alone.heapBytes(8));
        // One model for both parts: the low-latency part routes the hidden size, experts and top-k set once.
        MoeConfig other = MoeConfig.deepEpBuilder().hidden(4096).lowLatency(128, ElementType.FP8_E4M3).build();
        assertEquals(4096, other.lowLatencyPart().hidden());
        assertEquals(4096, other.highThroughputPart().hidden());
    }

    @Test
    void aConfigMayHaveEitherPartAloneButNotNeither() {
        MoeConfig ll = MoeConfig.deepEpLowLatencyBuilder().build();
        assertFalse(ll.hasHighThroughput());
        assertEquals(ll.lowLatencySizing(8).heapBytes(), ll.heapBytes(8), "a low-latency config takes only its heap");
        IllegalStateException noHt = assertThrows(IllegalStateException.class, ll::numChannels);
        assertTrue(noHt.getMessage().contains("no high-throughput part"), noHt.getMessage());
        assertThrows(IllegalStateException.class, () -> ll.sizing(8));
        assertTrue(ll.toBuilder().highThroughput(true).maxTokensPerRank(64).build().hasHighThroughput());
        IllegalStateException noLl = assertThrows(IllegalStateException.class,
                () -> MoeConfig.deepEpBuilder().build().lowLatencyDispatchType());
        assertTrue(noLl.getMessage().contains("lowLatency(maxTokensPerRank, dispatchType)"), noLl.getMessage());
        IllegalArgumentException neither = assertThrows(IllegalArgumentException.class,
                () -> MoeConfig.lowLatencyBuilder().hidden(128).numExperts(4).topK(2).build());
        assertTrue(neither.getMessage().contains("neither a high-throughput nor a low-latency part"),
                neither.getMessage());
    }

    /**
     * The heap a config asks for is enough for any world of that size: the largest of the direct, the host-transfer
     * and the ring layouts (a program that sized its heap from the ring layout alone ran out of heap in
     * MoeBuffer.create on every p2p world at DeepEP's shape). Over the proxy AUTO takes the copy engines, whose staging
     * lives in the heap: the largest. The figures are the ones MoeConfig.heapBytes and the README state.
     */
    @Test
    void theHeapOfDeepEpsShapeIsTheLargestLayoutForAnyWorld() {
        MoeConfig c = MoeConfig.deepEpBuilder().build();
        double[] megabytes = {589.0, 1178.0, 2355.9};
        double[] direct = {353.5, 707.0, 1414.0};
        for (int i = 0; i < 3; i++) {
            int ranks = 2 << i;
            long most = 0;
            for (PeerPaths p : PeerPaths.values()) {
                most = Math.max(most, c.sizing(ranks, p).heapBytes());
            }
            assertEquals(most, c.heapBytes(ranks), ranks + " ranks");
            assertTrue(c.sizing(ranks, true).heapBytes() > c.sizing(ranks, false).heapBytes(),
                    ranks + " ranks: the direct world's received rows outweigh the rings");
            assertTrue(c.sizing(ranks).hostTransfers(), "sizing(n) is the largest layout: the proxy's copy engines");
            assertEquals(megabytes[i], Math.round(c.heapBytes(ranks) / 1e5) / 10.0, ranks + " ranks, MB per rank");
            assertEquals(direct[i], Math.round(c.sizing(ranks, true).heapBytes() / 1e5) / 10.0, ranks + " ranks,"
                    + " MB per rank of a p2p world");
        }
        MoeConfig ll = MoeConfig.deepEpLowLatencyBuilder().build();
        double[] lowLatency = {2017.6, 2080.2, 2190.2};
        for (int i = 0; i < 3; i++) {
            int ranks = 2 << i;
            assertEquals(ll.lowLatencySizing(ranks, true).heapBytes(), ll.heapBytes(ranks), "staging is the worst case");
            assertEquals(lowLatency[i], Math.round(ll.heapBytes(ranks) / 1e5) / 10.0, ranks + " ranks, MB per rank");
            assertEquals(c.heapBytes(ranks) + ll.heapBytes(ranks), c.toBuilder()
                    .lowLatency(MoeConfig.DEEP_EP_LOW_LATENCY_TOKENS, ElementType.FP8_E4M3).build().heapBytes(ranks));
        }
    }

    @Test
    void moreChannelsThanADispatchBlockCanPlaceAreRefused() {
        MoeConfig.deepEpBuilder().numChannels(MoeConfig.MAX_CHANNELS).build();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MoeConfig.deepEpBuilder().numChannels(MoeConfig.MAX_CHANNELS + 1).build());
        assertTrue(e.getMessage().contains("numChannels must be at most 128"), e.getMessage());
    }

    @Test
    void rowLayoutOfBf16AndFp8() {
        HighThroughputSizing bf16 = MoeConfig.deepEpBuilder().build().sizing(8);
        assertEquals(14336, bf16.payloadBytes());
        assertEquals(0, bf16.scalesPerRow());
        assertEquals(14336, bf16.metaOffset());
        assertEquals(14336 + 80, bf16.dispatchRowBytes(), "meta: 2 ints + 8 indices + 8 weights = 72, padded to 80");
        assertEquals(32768, bf16.maxRecvTokens());
        assertEquals(32, bf16.numLocalExperts());
        HighThroughputSizing fp8 = MoeConfig.deepEpBuilder().dtype(ElementType.FP8_E4M3).build().sizing(8);
        assertEquals(7168, fp8.payloadBytes());
        assertEquals(56, fp8.scalesPerRow());
        assertEquals(7168 + 224, fp8.metaOffset());
        assertEquals(7168 + 224 + 80, fp8.dispatchRowBytes());
        assertEquals(2 * 7168, fp8.combineRowBytes(), "combine is BF16 whatever dispatch moves");
    }

    @Test
    void heapSectionsFollowEachOtherAlignedAndHoldTheirRings() {
        HighThroughputSizing s = small().build().sizing(4, false);
        long ringRows = 2L * 4 * 8;
        assertEquals(0, s.dispatchRecvRing());
        assertTrue(s.dispatchSendStage() >= ringRows * s.dispatchRowBytes());
        assertTrue(s.combineRecvRing() >= s.dispatchSendStage() + ringRows * s.dispatchRowBytes());
        assertTrue(s.combineSendStage() >= s.combineRecvRing() + ringRows * s.combineRowBytes());
        assertTrue(s.signals() >= s.combineSendStage() + ringRows * s.combineRowBytes());
        assertEquals(0, s.signals() % 256);
        assertEquals(6 * 2 * 4 + 4 * (2 * 4 + 4), s.signalWords(), "channel words, then the direct worlds' words");
        assertTrue(s.heapBytes() >= s.signals() + 8L * s.signalWords());
        assertEquals(s.directRecv(), s.combineLanding(), "no received tensors in the heap of a world with rings");
        assertEquals(s.combineLanding(), s.signals(), "no landing rows in the heap of a world with rings");
        assertTrue(s.recvX() >= s.combined() + 64L * 512);
        assertEquals(s.recvEnd(), s.deviceBytes(), "the received tensors are in device memory");
    }

    @Test
    void directWorldsKeepTheReceivedTensorsAndLandingRowsInTheHeapAndNoRings() {
        HighThroughputSizing rings = small().build().sizing(4, false);
        HighThroughputSizing s = small().build().sizing(4, true);
        assertTrue(s.direct());
        assertEquals(0, s.dispatchRecvRing());
        assertEquals(0, s.combineSendStage(), "no ring or staging section");
        assertEquals(0, s.directRecv());
        assertTrue(s.directRecvBytes() >= s.recvEnd() - s.recvX(), "the received tensors, as device memory lays them out");
        assertEquals(0, s.directRecvBytes() % 256);
        assertTrue(s.combineLanding() >= 2 * s.directRecvBytes(), "two regions of them, by the dispatch's parity");
        assertTrue(s.ceLanding() >= s.combineLanding() + 4L * 64 * s.combineRowBytes(), "[4 ranks][64 tokens] rows");
        assertEquals(s.ceLanding(), s.expertTable(), "no copy-engine landing rows where the SMs move the rows");
        assertTrue(s.signals() >= s.expertTable() + 2L * 4 * s.numLocalExperts() * 4, "[2][4 sources][L] counts");
        assertEquals(rings.signalWords(), s.signalWords(), "the same words either way");
        assertEquals(s.recvX(), s.deviceBytes(), "device memory ends where the received tensors would start");
        assertEquals(rings.localExpertCounts(), s.localExpertCounts(), "the same device layout up to there");
        assertTrue(s.directState() >= s.exchange() + 2 * s.exchangeBlockBytes(), "two exchange blocks");
        assertEquals(s.stageX(), s.stageSrc(), "no staging where the SMs move the rows");
        assertEquals(2 * s.exchangeHostBlockBytes(), s.exchangeHostBytes());
        assertEquals(0, rings.exchangeHostBytes(), "no exchange in a world with rings");
        assertEquals(rings.exchange(), rings.combined(), "nor its blocks, nor the direct state, nor staging");
    }

    @Test
    void theCopyEnginesStageEveryDestinationsRowsAndLandEverySourcesOnlyWhereChosen() {
        HighThroughputSizing sm = small().build().sizing(4, true);
        HighThroughputSizing ce = small().rowPath(MoeRowPath.COPY_ENGINE).build().sizing(4, true);
        HighThroughputSizing auto = small().rowPath(MoeRowPath.AUTO).build().sizing(4, true);
        assertTrue(ce.copyEngine());
        assertFalse(sm.copyEngine());
        assertFalse(auto.copyEngine(), "AUTO takes the SMs");
        assertFalse(small().rowPath(MoeRowPath.COPY_ENGINE).build().sizing(4, false).copyEngine(), "no copy engines"
                + " through rings (MoeBuffer refuses the config there)");
        long rows = 4L * 64;   // [4 destinations][64 tokens]
        assertEquals(ce.stageScales() - ce.stageX(), ExactSizes.align(rows * ce.payloadBytes(), 256));
        assertEquals(ce.stageSrc() - ce.stageTopkWeights(), ExactSizes.align(rows * 4 * ce.config().topK(), 256));
        assertTrue(ce.combined() >= ce.stageSrc() + rows * 8);
        assertEquals(ExactSizes.align(rows * ce.combineRowBytes(), 256), ce.expertTable() - ce.ceLanding());
        assertEquals(sm.heapBytes() + ExactSizes.align(rows * ce.combineRowBytes(), 256), ce.heapBytes(),
                "the copy engines add their landing rows, nothing else, to the heap");
    }

    /**
     * Over the proxy the copy engines' staging arrays and direct state move into the heap (a NIC's WRITE reads only
     * the heap), with the expert table's outgoing half; device memory keeps neither. SM over the proxy is the rings.
     */
    @Test
    void hostTransfersStageInTheHeapAndSmOverTheProxyIsTheRings() {
        HighThroughputSizing p2p = small().rowPath(MoeRowPath.COPY_ENGINE).build().sizing(4, PeerPaths.DIRECT);
        HighThroughputSizing host = small().build().sizing(4, PeerPaths.HOST_TRANSFERS);
        assertTrue(host.direct() && host.copyEngine() && host.hostTransfers(), "AUTO over the proxy: copy engines");
        assertFalse(p2p.hostTransfers());
        assertEquals(host.stageX(), host.ceLanding() + ExactSizes.align(4L * 64 * host.combineRowBytes(), 256),
                "the staging arrays follow the landing rows in the heap");
        assertEquals(p2p.stageSrc() - p2p.stageX(), host.stageSrc() - host.stageX(), "the same sections");
        assertTrue(host.hostDirectState() >= host.stageSrc() + 4L * 64 * 8);
        assertEquals(host.hostDirectState(), host.directState(), "the direct state words are in the heap");
        assertEquals(host.hostDirectState() + 256, host.expertTable());
        assertEquals(host.expertTable() + ExactSizes.align(2L * 2 * 4 * host.numLocalExperts() * 4, 256),
                host.signals(), "[2 parity][4 sources][L], then [2 parity][4 destinations][L]");
        assertEquals(p2p.heapBytes() + (host.hostDirectState() - host.stageX()) + 256
                        + (host.signals() - host.expertTable()) - (p2p.signals() - p2p.expertTable()),
                host.heapBytes(), "the staging, the state and the outgoing table added to the heap, nothing else");
        assertEquals(p2p.deviceBytes() - (p2p.combined() - p2p.directState()), host.deviceBytes(),
                "device memory keeps neither the staging nor the state");
        HighThroughputSizing rings = small().rowPath(MoeRowPath.SM).build().sizing(4, PeerPaths.HOST_TRANSFERS);
        assertFalse(rings.direct(), "SM over the proxy forces the rings");
        assertEquals(small().build().sizing(4, PeerPaths.RINGS).heapBytes(), rings.heapBytes());
        assertEquals(MoeRowPath.COPY_ENGINE, MoeRowPath.AUTO.resolve(PeerPaths.HOST_TRANSFERS));
        assertEquals(MoeRowPath.SM, MoeRowPath.AUTO.resolve(PeerPaths.DIRECT));
        assertEquals(MoeRowPath.SM, MoeRowPath.COPY_ENGINE.resolve(PeerPaths.RINGS), "only rings with an ibgda pair");
        IllegalArgumentException ibgda = assertThrows(IllegalArgumentException.class, () -> small().build()
                .highThroughputPart().sizing(4, PeerPaths.RINGS, MoeRowPath.COPY_ENGINE));
        assertTrue(ibgda.getMessage().contains("ibgda pair"), ibgda.getMessage());
    }

    @Test
    void signalWordsAreDistinctAndInRange() {
        HighThroughputSizing s = small().build().sizing(4);
        boolean[] seen = new boolean[s.signalWords()];
        for (int c = 0; c < 2; c++) {
            for (int r = 0; r < 4; r++) {
                for (int w : new int[] {s.dispatchCountWord(0, c, r), s.dispatchCountWord(1, c, r), s.dispatchTailWord(c, r),
                        s.dispatchCreditWord(c, r), s.combineTailWord(c, r), s.combineCreditWord(c, r)}) {
                    assertTrue(!seen[w], "word " + w + " used twice");
                    seen[w] = true;
                }
            }
        }
        for (int r = 0; r < 4; r++) {
            for (int w : new int[] {s.directCountWord(0, r, 0), s.directCountWord(0, r, 3), s.directCountWord(1, r, 1),
                    s.directCountWord(1, r, 2), s.directCountWord(0, r, 1), s.directCountWord(0, r, 2),
                    s.directCountWord(1, r, 0), s.directCountWord(1, r, 3), s.dispatchDoneWord(r), s.combineEntryWord(r),
                    s.combineDoneWord(r), s.dispatchEntryWord(r)}) {
                assertTrue(!seen[w], "word " + w + " used twice");
                seen[w] = true;
                assertTrue(s.signalWord(8L * w) != null, "word " + w + " has a name");
            }
        }
        for (boolean b : seen) {
            assertTrue(b, "every word is used");
        }
        assertEquals(new HighThroughputSizing.SignalWord("combine entry", -1, 2),
                s.signalWord(8L * s.combineEntryWord(2)));
        assertEquals(new HighThroughputSizing.SignalWord("layout exchange counts (odd exchanges)", -1, 3),
                s.signalWord(8L * s.directCountWord(1, 3, 1)));
        assertEquals(new HighThroughputSizing.SignalWord("dispatch entry", -1, 1), s.signalWord(8L * s.dispatchEntryWord(1)));
    }

    @Test
    void sizesThatOverflowAnIndexTypeAreRefusedNamingTheField() {
        IllegalArgumentException recv = assertThrows(IllegalArgumentException.class,
                () -> small().maxTokensPerRank(1 << 29).build().sizing(8));
        assertTrue(recv.getMessage().contains("maxRecvTokens"), recv.getMessage());
        IllegalArgumentException row = assertThrows(IllegalArgumentException.class,
                () -> small().hidden(1 << 30).build().sizing(2));
        assertTrue(row.getMessage().contains("payload bytes per row"), row.getMessage());
        IllegalArgumentException ring = assertThrows(IllegalArgumentException.class,
                () -> small().numExperts(16).numChannels(128).ringTokens(1 << 21).chunkTokens(1).build().sizing(16));
        assertTrue(ring.getMessage().contains("ring rows"), ring.getMessage());
        // a payload that just fits an int, plus the meta of top-32, does not
        IllegalArgumentException meta = assertThrows(IllegalArgumentException.class,
                () -> small().numExperts(32).topK(32).hidden((1 << 30) - 128).maxTokensPerRank(1).build().sizing(2));
        assertTrue(meta.getMessage().contains("dispatchRowBytes"), meta.getMessage());
    }

    @Test
    void inconsistentConfigurationsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> small().hidden(200).build());
        assertThrows(IllegalArgumentException.class, () -> small().topK(9).build());
        assertThrows(IllegalArgumentException.class, () -> small().topK(0).build());
        assertThrows(IllegalArgumentException.class, () -> small().chunkTokens(16).build());
        assertThrows(IllegalArgumentException.class, () -> small().combineWarps(9).build());
        IllegalArgumentException warps = assertThrows(IllegalArgumentException.class,
                () -> small().ringTokens(64).combineWarps(MoeConfig.MAX_COMBINE_WARPS + 1).build());
        assertTrue(warps.getMessage().contains("at most 16"), warps.getMessage());
        small().ringTokens(64).combineWarps(MoeConfig.MAX_COMBINE_WARPS).build();
        assertThrows(IllegalArgumentException.class, () -> small().dtype(ElementType.FP32).build());
        assertThrows(IllegalArgumentException.class, () -> small().maxTokensPerRank(0).build());
        IllegalArgumentException split = assertThrows(IllegalArgumentException.class, () -> small().build().sizing(3));
        assertTrue(split.getMessage().contains("multiple of the world size"), split.getMessage());
        assertThrows(IllegalArgumentException.class, () -> small().numExperts(32).build().sizing(32));
    }

    @Test
    void groupsOfWarpsPerPeerFillA512ThreadBlockAndHaveBarriersUpTo8Ranks() {
        assertEquals(8, HighThroughputRank.warpsPerPeer(2));
        assertEquals(5, HighThroughputRank.warpsPerPeer(3));
        assertEquals(4, HighThroughputRank.warpsPerPeer(4));
        assertEquals(2, HighThroughputRank.warpsPerPeer(8));
        assertEquals(1, HighThroughputRank.warpsPerPeer(9));
        for (int n = 1; n <= MoeConfig.MAX_RANKS; n++) {
            int w = HighThroughputRank.warpsPerPeer(n);
            assertTrue(w >= 1 && n * w <= 16, n + " ranks: " + w + " warps each");
            // A group of several warps takes named barrier 1 + its peer: 15 exist besides __syncthreads.
            assertTrue(w == 1 || n <= 15, n + " ranks");
        }
        assertEquals(48, MoeRank.blocksPerRank(MoeConfig.deepEpBuilder().numChannels(24).build()));
    }

    @Test
    void theCommunicationStreamIsOptInAndSurvivesToBuilder() {
        MoeConfig off = small().build();
        assertFalse(off.communicationStream(), "calls stay on the rank's stream unless asked");
        assertFalse(MoeConfig.deepEpBuilder().build().communicationStream());
        MoeConfig on = small().communicationStream(true).build();
        assertTrue(on.communicationStream());
        assertTrue(on.toBuilder().build().communicationStream(), "toBuilder keeps it");
        assertFalse(on.toBuilder().communicationStream(false).build().communicationStream());
        assertTrue(on.toString().contains("communicationStream=true"), on.toString());
        assertEquals(off.sizing(4).deviceBytes(), on.sizing(4).deviceBytes(), "the stream changes no sizes");
        assertEquals(off.sizing(4).heapBytes(), on.sizing(4).heapBytes());
    }

    @Test
    void channelsCoverTheTokensContiguously() {
        for (int tokens : new int[] {0, 1, 7, 64, 65}) {
            for (int channels : new int[] {1, 3, 8}) {
                int next = 0;
                for (int c = 0; c < channels; c++) {
                    assertEquals(next, MoeChannels.start(tokens, channels, c));
                    next = MoeChannels.end(tokens, channels, c);
                    for (int t = MoeChannels.start(tokens, channels, c); t < next; t++) {
                        assertEquals(c, MoeChannels.of(tokens, channels, t));
                    }
                }
                assertEquals(tokens, next);
            }
        }
    }
}
