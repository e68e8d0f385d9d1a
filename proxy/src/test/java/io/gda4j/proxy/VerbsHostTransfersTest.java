package io.gda4j.proxy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Pointer;

import io.gda4j.nic.HostPoster;
import io.gda4j.nic.MemoryKind;
import io.gda4j.nic.NicQp;
import io.gda4j.nic.emulated.EmulatedNic;
import io.gda4j.nic.emulated.EmulatedNicConfig;
import io.gda4j.nic.emulated.EngineStats;
import io.gda4j.nic.emulated.HostMemoryPlatform;
import io.gda4j.transport.HostTransfers.Transfer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The verbs link's host-queued transfers on the emulated NIC over host memory (no GPU): three ranks in one process,
 * every rank sending every peer a call's transfers as a MoE call over the proxy does (the host work a host function
 * would run, run here directly). Each call posts exactly peers x (transfers + 1 signal) work requests, each peer's as
 * one chained post with one doorbell; the data lands byte-exact and the signal word takes the counter's value, also
 * where the NIC's writes may pass each other (the signal is then an add of one); a source outside the heap is refused
 * before anything is posted.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class VerbsHostTransfersTest {
    static final int RANKS = 3;
    static final int HEAP = 1 << 19;
    /** Where the signal words are: one per source, at the top of each heap; the counter below them. */
    static final long SIGNALS = HEAP - 8L * RANKS;
    static final long COUNTER = SIGNALS - 8;
    /** A call's transfers per peer: rows, scales, top-k, sources, as a FP8 dispatch sends (sizes in bytes). */
    static final int[] SIZES = {40_000, 1_000, 333, 64};
    /** Each source's rows land in its own slice of the peer's heap; each transfer in its own part of the slice. */
    static final long SLICE = 64_000;

    HostMemoryPlatform platform;
    EmulatedNic nic;
    VerbsSession session;
    ProxyService service;
    long[] heaps = new long[RANKS];
    /** [from][to]: the link's test channel, its counting poster and its transfers (null on the diagonal). */
    VerbsTestChannel[][] channels = new VerbsTestChannel[RANKS][RANKS];
    CountingPoster[][] posters = new CountingPoster[RANKS][RANKS];
    VerbsTransfers[][] transfers = new VerbsTransfers[RANKS][RANKS];

    @BeforeEach
    void open() {
        platform = new HostMemoryPlatform();
        nic = new EmulatedNic(platform, new EmulatedNicConfig(EmulatedNicConfig.IDLE_BACKOFF, true));
        session = new VerbsSession(nic, bytes -> PlatformMemory.words(platform, bytes), 256);
        for (int r = 0; r < RANKS; r++) {
            heaps[r] = platform.allocate(HEAP);
            platform.allowWrites(heaps[r], HEAP);
            session.registerHeap(r, null, heaps[r], HEAP, MemoryKind.DEVICE);
        }
        service = new ProxyService(new ProxyConfig(1, VerbsTestChannel.DEPTH, ProxyConfig.IDLE_BACKOFF,
                ProxyConfig.SignalPath.AUTO, Duration.ofSeconds(5)));
    }

    @AfterEach
    void close() {
        try {
            service.close();
        } catch (ProxyException expectedAfterAFailure) {
            // a test that failed a channel on purpose leaves it reporting that failure
        }
        session.close();
        nic.close();
    }

    /** Connects every pair; {@code relaxed}: the links say the NIC may place WRITEs out of order. */
    void connectAll(boolean relaxed) {
        for (int a = 0; a < RANKS; a++) {
            for (int b = a + 1; b < RANKS; b++) {
                VerbsLink[] both = session.connect(a, null, "rank " + a, b, null, "rank " + b);
                for (VerbsLink l : both) {
                    int from = l.localRank();
                    int to = l.peerRank();
                    posters[from][to] = new CountingPoster(l.poster());
                    VerbsLink counted = new VerbsLink(l.localRank(), l.peerRank(), l.peerDescription(),
                            posters[from][to], l.localHeap(), l.localLkey(), l.peerHeap(), l.peerRkey(), l.heapBytes(),
                            l.fetchAddress(), l.fetchLkey(), relaxed, l.localCredits(), l.peerCredits(),
                            l.peerCreditsRkey());
                    channels[from][to] = new VerbsTestChannel(counted, 8, 20 * VerbsTestChannel.SECOND);
                    transfers[from][to] = new VerbsTransfers("rank " + from + " -> rank " + to, counted,
                            channels[from][to].handler, heaps[from]);
                    service.add(channels[from][to].channel, from);
                }
            }
        }
    }

    /** Source {@code from}'s bytes of transfer {@code i} of call {@code call}. */
    static byte[] data(int from, int to, int i, int call) {
        byte[] b = new byte[SIZES[i]];
        new Random(((long) call * RANKS + from) * RANKS * 16 + to * 16L + i).nextBytes(b);
        return b;
    }

    /** Where transfer {@code i} from {@code from} lands in a peer's heap, and where it is staged in the source's. */
    static long landing(int from, int i) {
        long at = from * SLICE;
        for (int j = 0; j < i; j++) {
            at += SIZES[j] + 64;
        }
        return at;
    }

    static long staging(int to, int i) {
        return RANKS * SLICE + landing(to, i);
    }

    /** One call: every rank stages its data for every peer, bumps its counter and queues a batch per peer. */
    void call(int call) {
        List<Runnable> hostWork = new ArrayList<>();
        for (int from = 0; from < RANKS; from++) {
            new Pointer(heaps[from]).setLong(COUNTER, call);
            for (int to = 0; to < RANKS; to++) {
                if (to == from) {
                    continue;
                }
                List<Transfer> list = new ArrayList<>();
                for (int i = 0; i < SIZES.length; i++) {
                    byte[] b = data(from, to, i, call);
                    new Pointer(heaps[from]).write(staging(to, i), b, 0, b.length);
                    list.add(new Transfer(heaps[from] + staging(to, i), landing(from, i), b.length));
                }
                transfers[from][to].queue(null, list, heaps[from] + COUNTER, SIGNALS + 8L * from, hostWork::add);
            }
        }
        assertEquals(RANKS * (RANKS - 1), hostWork.size(), "one host function's work per link");
        hostWork.forEach(Runnable::run);
        for (int to = 0; to < RANKS; to++) {
            for (int from = 0; from < RANKS; from++) {
                if (from == to) {
                    continue;
                }
                long word = heaps[to] + SIGNALS + 8L * from;
                int f = from;
                int t = to;
                VerbsTestChannel.await(() -> new Pointer(word).getLong(0) >= call || channels[f][t].channel.isFaulted(),
                        "rank " + from + "'s signal at rank " + to);
                assertFalse(channels[from][to].channel.isFaulted(), () -> channels[f][t].channel.problem().orElse("?"));
                assertEquals(call, new Pointer(word).getLong(0), "the signal takes the counter's value");
                for (int i = 0; i < SIZES.length; i++) {
                    assertArrayEquals(data(from, to, i, call), new Pointer(heaps[to]).getByteArray(landing(from, i),
                            SIZES[i]), "call " + call + ": transfer " + i + " from rank " + from + " at rank " + to);
                }
            }
        }
    }

    @Test
    void eachCallPostsPeersTimesTransfersWorkRequestsWithOneDoorbellPerPeer() {
        connectAll(false);
        call(1); // the first grants of credits go out meanwhile: count from the second call on
        awaitQuiet();
        for (int c = 2; c <= 6; c++) {
            long[][] posts = new long[RANKS][RANKS];
            long[][] rings = new long[RANKS][RANKS];
            for (int a = 0; a < RANKS; a++) {
                for (int b = 0; b < RANKS; b++) {
                    if (a != b) {
                        posts[a][b] = posters[a][b].posts;
                        rings[a][b] = posters[a][b].rings;
                    }
                }
            }
            EngineStats before = nic.stats();
            call(c);
            awaitQuiet();
            for (int a = 0; a < RANKS; a++) {
                for (int b = 0; b < RANKS; b++) {
                    if (a != b) {
                        assertEquals(SIZES.length + 1, posters[a][b].posts - posts[a][b], "call " + c + ", rank " + a
                                + " -> rank " + b + ": a WRITE per transfer and the signal");
                        assertEquals(1, posters[a][b].rings - rings[a][b], "call " + c + ", rank " + a + " -> rank "
                                + b + ": one chained post, one doorbell");
                    }
                }
            }
            assertEquals((long) RANKS * (RANKS - 1) * (SIZES.length + 1), nic.stats().since(before).wqes(),
                    "call " + c + ": the NIC executed peers x transfers work requests per rank, nothing else");
        }
        assertEquals(6, channels[0][1].handler.batchesPosted());
    }

    @Test
    void whereWritesMayPassEachOtherTheSignalAddsOne() {
        connectAll(true);
        for (int c = 1; c <= 3; c++) {
            call(c); // each asserts the signal word == c: three adds of one
        }
        awaitQuiet();
        assertEquals(0, nic.stats().errors());
    }

    @Test
    void aSourceOutsideTheHeapIsRefusedBeforeAnythingIsPosted() {
        connectAll(false);
        List<Transfer> outside = List.of(new Transfer(heaps[0] + HEAP - 100, 0, 200));
        List<Runnable> handedOver = new ArrayList<>();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> transfers[0][1].queue(null, outside, heaps[0] + COUNTER, SIGNALS, handedOver::add));
        assertTrue(e.getMessage().contains("rank 0 -> rank 1") && e.getMessage().contains("copy the data into the"
                + " heap first"), e.getMessage());
        List<Transfer> ok = List.of(new Transfer(heaps[0], 0, 8));
        assertThrows(IllegalArgumentException.class,
                () -> transfers[0][1].queue(null, ok, heaps[0] + COUNTER, SIGNALS + 4, handedOver::add),
                "misaligned signal");
        assertTrue(handedOver.isEmpty(), "nothing for a host function to hand over");
        assertEquals(0, channels[0][1].handler.batchesPosted());
    }

    /** Waits until every link's work requests have completed (the proxy thread reaps them). */
    void awaitQuiet() {
        for (int a = 0; a < RANKS; a++) {
            for (int b = 0; b < RANKS; b++) {
                if (a != b) {
                    HostPoster p = posters[a][b];
                    VerbsTestChannel.await(() -> p.retiredIndex() >= p.producerIndex(), "completions " + a + "->" + b);
                }
            }
        }
    }

    /** A poster that counts work requests and doorbells that publish something (the proxy rings after every poll). */
    static final class CountingPoster implements HostPoster {
        private final HostPoster inner;
        volatile long posts;
        volatile long rings;
        private long rungAt;

        CountingPoster(HostPoster inner) {
            this.inner = inner;
        }

        @Override
        public NicQp qp() {
            return inner.qp();
        }

        @Override
        public long producerIndex() {
            return inner.producerIndex();
        }

        @Override
        public long retiredIndex() {
            return inner.retiredIndex();
        }

        @Override
        public long postWrite(long raddr, int rkey, long laddr, int lkey, int byteCount, long timeoutNanos)
                throws TimeoutException {
            posts++;
            return inner.postWrite(raddr, rkey, laddr, lkey, byteCount, timeoutNanos);
        }

        @Override
        public long postWriteInline(long raddr, int rkey, byte[] payload, long timeoutNanos) throws TimeoutException {
            posts++;
            return inner.postWriteInline(raddr, rkey, payload, timeoutNanos);
        }

        @Override
        public long postRead(long raddr, int rkey, long laddr, int lkey, int byteCount, long timeoutNanos)
                throws TimeoutException {
            posts++;
            return inner.postRead(raddr, rkey, laddr, lkey, byteCount, timeoutNanos);
        }

        @Override
        public long postFetchAdd(long raddr, int rkey, long add, long laddr, int lkey, long timeoutNanos)
                throws TimeoutException {
            posts++;
            return inner.postFetchAdd(raddr, rkey, add, laddr, lkey, timeoutNanos);
        }

        @Override
        public long postCompareSwap(long raddr, int rkey, long compare, long swap, long laddr, int lkey,
                                    long timeoutNanos) throws TimeoutException {
            posts++;
            return inner.postCompareSwap(raddr, rkey, compare, swap, laddr, lkey, timeoutNanos);
        }

        @Override
        public void ring() {
            if (inner.producerIndex() != rungAt) {
                rings++;
                rungAt = inner.producerIndex();
            }
            inner.ring();
        }

        @Override
        public int poll() {
            return inner.poll();
        }

        @Override
        public void quiet(long timeoutNanos) throws TimeoutException {
            inner.quiet(timeoutNanos);
        }
    }
}
