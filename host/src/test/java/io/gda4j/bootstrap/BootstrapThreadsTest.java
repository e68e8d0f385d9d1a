package io.gda4j.bootstrap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.bootstrap.BootstrapFrameDescriptor.Frame;

import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.channels.ServerSocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Ranks as threads of this JVM, on localhost at an ephemeral port. */
@Timeout(60)
class BootstrapThreadsTest {
    private static final String TOKEN = "job-42";
    private final ExecutorService pool = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    private static ServerSocket listen() throws IOException {
        // the root's gate selects on the socket's channel
        return ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50).socket();
    }

    private static BootstrapConfig config(int rank, int size, ServerSocket root) {
        return BootstrapConfig.of(rank, size, new InetSocketAddress("127.0.0.1", root.getLocalPort()), TOKEN)
                .withTimeouts(10_000, 10_000);
    }

    /** Starts rank 0 on {@code server} and ranks 1.. with {@code configOf}; each runs {@code body}. */
    private <T> List<Future<T>> world(int size, ServerSocket server, IntFunction<BootstrapConfig> configOf,
                                      RankBody<T> body) {
        List<Future<T>> out = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            int rank = r;
            out.add(pool.submit(() -> {
                BootstrapConfig c = configOf.apply(rank);
                try (Bootstrap b = rank == 0 ? Bootstrap.join(c, PeerFailureListener.NONE, server)
                        : Bootstrap.join(c, PeerFailureListener.NONE)) {
                    return body.run(b);
                }
            }));
        }
        return out;
    }

    interface RankBody<T> {
        T run(Bootstrap b) throws Exception;
    }

    private static byte[] bytesOf(int rank, int round) {
        byte[] b = new byte[rank * 7 + round]; // different lengths per rank, including empty
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (rank * 31 + round * 7 + i);
        }
        return b;
    }

    @Test
    void fourRanksAgreeOnAllGathersAndBarriers() throws Exception {
        int size = 4;
        int rounds = 20;
        ServerSocket server = listen();
        List<Future<List<byte[][]>>> ranks = world(size, server, r -> config(r, size, server), b -> {
            List<byte[][]> seen = new ArrayList<>();
            for (int round = 0; round < rounds; round++) {
                seen.add(b.allGather(bytesOf(b.rank(), round)));
                b.barrier();
            }
            return seen;
        });
        for (Future<List<byte[][]>> f : ranks) {
            List<byte[][]> seen = f.get(30, TimeUnit.SECONDS);
            for (int round = 0; round < rounds; round++) {
                assertEquals(size, seen.get(round).length);
                for (int r = 0; r < size; r++) {
                    assertArrayEquals(bytesOf(r, round), seen.get(round)[r], "round " + round + " rank " + r);
                }
            }
        }
    }

    @Test
    void aWrongTokenIsRefusedAndTheJobCompletes() throws Exception {
        int size = 3;
        ServerSocket server = listen();
        // another job's rank 1 knocks first; the real rank 1 joins after its refusal
        BootstrapConfig intruder = config(1, size, server).withToken("other-job");
        Future<String> refused = pool.submit(() ->
                assertThrows(BootstrapException.class, () -> Bootstrap.join(intruder, PeerFailureListener.NONE))
                        .getMessage());
        Future<Void> root = pool.submit(() -> {
            try (Bootstrap b = Bootstrap.join(config(0, size, server), PeerFailureListener.NONE, server)) {
                b.barrier();
            }
            return null;
        });
        String why = refused.get(20, TimeUnit.SECONDS);
        assertTrue(why.contains("wrong job token"), why);
        List<Future<Void>> others = new ArrayList<>();
        for (int r = 1; r < size; r++) {
            int rank = r;
            others.add(pool.submit(() -> {
                try (Bootstrap b = Bootstrap.join(config(rank, size, server), PeerFailureListener.NONE)) {
                    b.barrier();
                }
                return null;
            }));
        }
        root.get(20, TimeUnit.SECONDS);
        for (Future<Void> f : others) {
            f.get(20, TimeUnit.SECONDS);
        }
    }

    @Test
    void duplicateRankWrongSizeAndStrayBytesAreRefusedWithoutHarm() throws Exception {
        int size = 3;
        ServerSocket server = listen();
        Future<Void> root = pool.submit(() -> {
            try (Bootstrap b = Bootstrap.join(config(0, size, server), PeerFailureListener.NONE, server)) {
                b.barrier();
                assertArrayEquals(new byte[] {2}, b.allGather(new byte[] {(byte) b.rank()})[2]);
            }
            return null;
        });
        Future<Void> rank1 = pool.submit(() -> {
            try (Bootstrap b = Bootstrap.join(config(1, size, server), PeerFailureListener.NONE)) {
                b.barrier();
                b.allGather(new byte[] {(byte) b.rank()});
            }
            return null;
        });
        int port = server.getLocalPort();
        // stray clients: random bytes, a huge length prefix, a valid-looking frame of the wrong type, a hello with
        // a bad magic. Each gets a REFUSE (or a closed connection) and nothing else.
        Random random = new Random(7);
        for (int i = 0; i < 5; i++) {
            byte[] junk = new byte[1 + random.nextInt(3000)];
            random.nextBytes(junk);
            assertRefused(port, junk, null);
        }
        assertRefused(port, new byte[] {0x7f, -1, -1, -1, 1}, "limit");
        assertRefused(port, frame(BootstrapFrameDescriptor.HEARTBEAT, new byte[0]), "not a gda4j hello");
        byte[] badMagic = BootstrapFrameDescriptor.hello(2, size, BootstrapFrameDescriptor.nonce());
        badMagic[0] = 0;
        assertRefused(port, frame(BootstrapFrameDescriptor.HELLO, badMagic), "magic");
        byte[] badVersion = BootstrapFrameDescriptor.hello(2, size, BootstrapFrameDescriptor.nonce());
        badVersion[5] = 99;
        assertRefused(port, frame(BootstrapFrameDescriptor.HELLO, badVersion), "version 99");
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setSoTimeout(10_000);
            Frame f = RawRank.knock(s, 2, size + 1, TOKEN); // the size is checked once the token is proven
            assertEquals(BootstrapFrameDescriptor.REFUSE, f.type());
            assertTrue(f.text().contains("world size 4"), f.text());
        }
        // rank 1 connects on its first try (the root listens already) and blocks until the world is complete;
        // a second rank 1 is refused however long it waits
        Thread.sleep(1_000);
        String dup = assertThrows(BootstrapException.class,
                () -> Bootstrap.join(config(1, size, server).withTimeouts(5_000, 5_000), PeerFailureListener.NONE))
                .getMessage();
        assertTrue(dup.contains("rank 1 has already joined"), dup);
        Future<Void> rank2 = pool.submit(() -> {
            try (Bootstrap b = Bootstrap.join(config(2, size, server), PeerFailureListener.NONE)) {
                b.barrier();
                b.allGather(new byte[] {(byte) b.rank()});
            }
            return null;
        });
        root.get(20, TimeUnit.SECONDS);
        rank1.get(20, TimeUnit.SECONDS);
        rank2.get(20, TimeUnit.SECONDS);
    }

    private static byte[] frame(byte type, byte[] body) throws IOException {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        BootstrapFrameDescriptor.write(out, type, body);
        return out.toByteArray();
    }

    /** Sends {@code bytes}; the root answers REFUSE (with {@code reasonPart} if given) or closes, never more. */
    private static void assertRefused(int port, byte[] bytes, String reasonPart) throws IOException {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            try {
                out.write(bytes);
                out.flush();
            } catch (IOException e) {
                return; // the root closed on us mid-write: refused
            }
            InputStream in = s.getInputStream();
            Frame f;
            try {
                f = BootstrapFrameDescriptor.read(in, 4096);
            } catch (IOException e) {
                // a short junk write: the root waited for the rest until its hello timeout and closed; or a reset
                assertTrue(reasonPart == null, "expected a REFUSE naming '" + reasonPart + "', got " + e);
                return;
            }
            assertEquals(BootstrapFrameDescriptor.REFUSE, f.type(), "answer to a stray: " + f.text());
            if (reasonPart != null) {
                assertTrue(f.text().contains(reasonPart), f.text());
            }
            assertEquals(-1, readOrEof(in), "the root closes a refused connection");
        }
    }

    private static int readOrEof(InputStream in) {
        try {
            return in.read();
        } catch (IOException e) {
            return -1; // a reset counts as closed
        }
    }

    @Test
    void aRankThatNeverComesIsNamedByTheRootsTimeout() throws Exception {
        int size = 4;
        ServerSocket server = listen();
        IntFunction<BootstrapConfig> cfg = r -> config(r, size, server).withTimeouts(1_500, 1_500);
        Future<String> root = pool.submit(() -> assertThrows(BootstrapException.class,
                () -> Bootstrap.join(cfg.apply(0), PeerFailureListener.NONE, server)).getMessage());
        List<Future<String>> present = new ArrayList<>();
        for (int r : new int[] {1, 3}) { // rank 2 never comes
            present.add(pool.submit(() -> assertThrows(BootstrapException.class,
                    () -> Bootstrap.join(cfg.apply(r), PeerFailureListener.NONE)).getMessage()));
        }
        String why = root.get(20, TimeUnit.SECONDS);
        assertTrue(why.contains("rank(s) 2 did not arrive"), why);
        for (Future<String> f : present) {
            String theirs = f.get(20, TimeUnit.SECONDS);
            assertTrue(theirs.contains("rank(s) 2 did not arrive"), "the root tells those present: " + theirs);
        }
    }

    @Test
    void aRankThatSkipsACollectiveIsNamedByTheTimeout() throws Exception {
        int size = 3;
        ServerSocket server = listen();
        List<Future<String>> ranks = world(size, server, r -> config(r, size, server).withTimeouts(10_000, 1_000),
                b -> {
                    b.barrier();
                    if (b.rank() == 1) {
                        Thread.sleep(1_500); // misses the all-gather's time limit but keeps its heartbeats
                    }
                    return assertThrows(BootstrapException.class, () -> b.allGather(new byte[1])).getMessage();
                });
        String rootWhy = ranks.get(0).get(20, TimeUnit.SECONDS);
        assertTrue(rootWhy.contains("all-gather #2: rank(s) 1 did not arrive within 1000 ms"), rootWhy);
        String rank2Why = ranks.get(2).get(20, TimeUnit.SECONDS);
        assertTrue(rank2Why.contains("rank(s) 1 did not arrive"), "the root tells the others: " + rank2Why);
    }

    @Test
    void aSilentPeerIsDeclaredDeadAndEveryCallFailsNamingIt() throws Exception {
        int size = 2;
        ServerSocket server = listen();
        BootstrapConfig c = new BootstrapConfig(0, size, new InetSocketAddress("127.0.0.1", server.getLocalPort()),
                TOKEN, 10_000, 30_000, 100, 600, 1024);
        LinkedBlockingQueue<String> heard = new LinkedBlockingQueue<>();
        Future<Bootstrap> root = pool.submit(() -> Bootstrap.join(c, (rank, why) -> heard.add(rank + ":" + why),
                server));
        // rank 1 by hand: a correct hello, then silence with the connection open (a stopped process)
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort())) {
            RawRank.join(s, 1, size, TOKEN);
            try (Bootstrap b = root.get(10, TimeUnit.SECONDS)) {
                long start = System.nanoTime();
                PeerFailedException e = assertThrows(PeerFailedException.class, b::barrier);
                long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertEquals(1, e.deadRank());
                assertTrue(e.getMessage().contains("rank 1 failed: silent for"), e.getMessage());
                assertTrue(tookMillis < 5_000, "silence found after " + tookMillis + " ms");
                String h = heard.poll(5, TimeUnit.SECONDS);
                assertNotNull(h);
                assertTrue(h.startsWith("1:silent for"), h);
                // later calls fail fast too
                assertInstanceOf(PeerFailedException.class,
                        assertThrows(BootstrapException.class, () -> b.allGather(new byte[0])));
            }
        }
    }

    @Test
    void anOversizedContributionIsRefusedBeforeItIsSent() throws Exception {
        int size = 2;
        ServerSocket server = listen();
        List<Future<Void>> ranks = world(size, server, r -> new BootstrapConfig(r, size,
                new InetSocketAddress("127.0.0.1", server.getLocalPort()), TOKEN, 10_000, 10_000, 500, 3_000, 16), b -> {
                    assertThrows(IllegalArgumentException.class, () -> b.allGather(new byte[17]));
                    byte[][] all = b.allGather(new byte[16]);
                    assertEquals(2, all.length);
                    return null;
                });
        for (Future<Void> f : ranks) {
            f.get(20, TimeUnit.SECONDS);
        }
    }

    @Test
    void aFrameOverTheLimitFromAJoinedRankKillsOnlyThatRank() throws Exception {
        int size = 2;
        ServerSocket server = listen();
        BootstrapConfig c = new BootstrapConfig(0, size, new InetSocketAddress("127.0.0.1", server.getLocalPort()),
                TOKEN, 10_000, 10_000, 100, 3_000, 16);
        Future<Bootstrap> root = pool.submit(() -> Bootstrap.join(c, PeerFailureListener.NONE, server));
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort())) {
            RawRank.join(s, 1, size, TOKEN);
            try (Bootstrap b = root.get(10, TimeUnit.SECONDS)) {
                DataOutputStream out = new DataOutputStream(s.getOutputStream());
                out.writeInt(1 << 20); // a 1 MiB frame announced to a root that accepts 16-byte contributions
                out.flush();
                PeerFailedException e = assertThrows(PeerFailedException.class, b::barrier);
                assertTrue(e.getMessage().contains("limit"), e.getMessage());
            }
        }
    }

    @Test
    void aSilentRootIsDeclaredDeadByItsRanks() throws Exception {
        ServerSocket server = listen();
        BootstrapConfig c = new BootstrapConfig(1, 2, new InetSocketAddress("127.0.0.1", server.getLocalPort()),
                TOKEN, 10_000, 30_000, 100, 600, 1024);
        LinkedBlockingQueue<String> heard = new LinkedBlockingQueue<>();
        Future<Bootstrap> member = pool.submit(() -> Bootstrap.join(c, (rank, why) -> heard.add(rank + ":" + why)));
        // the root by hand: welcomes rank 1, says the world is ready, then never speaks again (a stopped process)
        try (Socket s = server.accept()) {
            RawRank.welcome(s, TOKEN);
            try (Bootstrap b = member.get(10, TimeUnit.SECONDS)) {
                PeerFailedException e = assertThrows(PeerFailedException.class, b::barrier);
                assertEquals(0, e.deadRank());
                assertTrue(e.getMessage().contains("rank 0 failed: silent for"), e.getMessage());
                String h = heard.poll(5, TimeUnit.SECONDS);
                assertNotNull(h);
                assertTrue(h.startsWith("0:silent for"), h);
            }
        }
        server.close();
    }

    /**
     * A rank that closes right after a barrier must not fail that barrier for the others (its goodbye reached the
     * root while the root was still sending the barrier's results), but the next collective, which cannot complete
     * without it, fails naming it. Repeated, because the window is a few microseconds wide.
     */
    @Test
    void aRankThatLeavesAfterABarrierFailsOnlyTheNextCollective() throws Exception {
        int size = 4;
        for (int attempt = 0; attempt < 20; attempt++) {
            ServerSocket server = listen();
            List<Future<String>> ranks = world(size, server, r -> config(r, size, server), b -> {
                b.barrier();
                if (b.rank() == size - 1) {
                    return "left"; // closed by world() at once
                }
                try {
                    b.barrier();
                    return "the second barrier completed without rank " + (size - 1);
                } catch (BootstrapException e) {
                    return e.getMessage();
                }
            });
            List<String> all = new ArrayList<>();
            for (int r = 0; r < size; r++) {
                all.add(ranks.get(r).get(30, TimeUnit.SECONDS));
            }
            for (int r = 0; r < size; r++) {
                String outcome = all.get(r) + " (all ranks: " + all + ")";
                if (r == size - 1) {
                    assertEquals("left", all.get(r));
                } else {
                    assertTrue(outcome.contains("rank " + (size - 1) + " closed its bootstrap"),
                            "attempt " + attempt + ", rank " + r + ": " + outcome);
                }
            }
        }
    }

    /**
     * An abort announced by a member reaches every other rank (through the root) and one announced by the root
     * reaches every member, with the origin and the reason; the world's collectives go on working.
     */
    @Test
    void anAnnouncedAbortReachesEveryOtherRankAndTheWorldGoesOn() throws Exception {
        int size = 3;
        ServerSocket server = listen();
        List<java.util.concurrent.LinkedBlockingQueue<String>> heard = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            heard.add(new java.util.concurrent.LinkedBlockingQueue<>());
        }
        List<Future<String>> ranks = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            int rank = r;
            PeerFailureListener listener = new PeerFailureListener() {
                @Override
                public void onPeerFailure(int dead, String why) {
                    heard.get(rank).add("dead " + dead);
                }

                @Override
                public void onPeerAbort(int origin, String why) {
                    heard.get(rank).add("abort " + origin + " " + why);
                }
            };
            ranks.add(pool.submit(() -> {
                BootstrapConfig c = config(rank, size, server);
                try (Bootstrap b = rank == 0 ? Bootstrap.join(c, listener, server) : Bootstrap.join(c, listener)) {
                    b.barrier();
                    if (rank == 2) {
                        b.announceAbort("device error on rank 2");
                    }
                    b.barrier();
                    if (rank == 0) {
                        b.announceAbort("host abort on rank 0");
                    }
                    byte[][] all = b.allGather(new byte[] {(byte) rank});
                    b.barrier();
                    return "gathered " + all.length;
                }
            }));
        }
        for (int r = 0; r < size; r++) {
            assertEquals("gathered 3", ranks.get(r).get(30, TimeUnit.SECONDS), "rank " + r);
        }
        for (int r = 0; r < size; r++) {
            List<String> got = new ArrayList<>();
            heard.get(r).drainTo(got);
            List<String> want = new ArrayList<>();
            if (r != 2) {
                want.add("abort 2 device error on rank 2");
            }
            if (r != 0) {
                want.add("abort 0 host abort on rank 0");
            }
            assertEquals(want.size(), got.size(), "rank " + r + " heard " + got);
            assertTrue(got.containsAll(want), "rank " + r + " heard " + got + ", wanted " + want);
        }
    }

    /** A rank started with another WORLD_SIZE is told the root's size, and the root's timeout names the refusal. */
    @Test
    void aWorldSizeMismatchIsNamedAtBothEnds() throws Exception {
        int size = 3;
        ServerSocket server = listen();
        IntFunction<BootstrapConfig> cfg = r -> config(r, size, server).withTimeouts(1_500, 1_500);
        Future<String> root = pool.submit(() -> assertThrows(BootstrapException.class,
                () -> Bootstrap.join(cfg.apply(0), PeerFailureListener.NONE, server)).getMessage());
        Future<String> rank1 = pool.submit(() -> assertThrows(BootstrapException.class,
                () -> Bootstrap.join(cfg.apply(1), PeerFailureListener.NONE)).getMessage());
        BootstrapConfig wrongSize = new BootstrapConfig(2, size + 1, cfg.apply(2).root(), TOKEN, 1_500, 1_500, 500,
                3_000, 1 << 20);
        String member = assertThrows(BootstrapException.class,
                () -> Bootstrap.join(wrongSize, PeerFailureListener.NONE)).getMessage();
        assertTrue(member.contains("world size 4 but the root's world has 3"), member);
        String why = root.get(20, TimeUnit.SECONDS);
        assertTrue(why.contains("rank(s) 2 did not arrive"), why);
        assertTrue(why.contains("Refused meanwhile: rank 2 from 127.0.0.1: world size 4 but the root's world has 3"),
                why);
        assertTrue(rank1.get(20, TimeUnit.SECONDS).contains("world size 4"), "rank 1 hears the root's reason too");
    }

    /** A rank started twice is refused, and the root's join timeout lists that refusal with the others. */
    @Test
    void aDuplicateRankIsListedInTheRootsTimeout() throws Exception {
        int size = 3;
        ServerSocket server = listen();
        IntFunction<BootstrapConfig> cfg = r -> config(r, size, server).withTimeouts(2_500, 2_500);
        Future<String> root = pool.submit(() -> assertThrows(BootstrapException.class,
                () -> Bootstrap.join(cfg.apply(0), PeerFailureListener.NONE, server)).getMessage());
        Future<String> rank1 = pool.submit(() -> assertThrows(BootstrapException.class,
                () -> Bootstrap.join(cfg.apply(1), PeerFailureListener.NONE)).getMessage());
        Thread.sleep(500); // rank 1 has joined; rank 2 never comes
        String twice = assertThrows(BootstrapException.class,
                () -> Bootstrap.join(cfg.apply(1), PeerFailureListener.NONE)).getMessage();
        assertTrue(twice.contains("rank 1 has already joined"), twice);
        String why = root.get(20, TimeUnit.SECONDS);
        assertTrue(why.contains("rank(s) 2 did not arrive"), why);
        assertTrue(why.contains("Refused meanwhile: rank 1 from 127.0.0.1: rank 1 has already joined"), why);
        assertTrue(rank1.get(20, TimeUnit.SECONDS).contains("rank(s) 2 did not arrive"));
    }

    /** Another program on the root's port (here one that answers like a web server) is named as such at once. */
    @Test
    void aProgramThatIsNotARootIsNamedAtOnce() throws Exception {
        try (ServerSocket other = listen()) {
            pool.submit(() -> {
                try (Socket s = other.accept()) {
                    s.getOutputStream().write("HTTP/1.1 400 Bad Request\r\n\r\n".getBytes(
                            java.nio.charset.StandardCharsets.US_ASCII));
                    s.getOutputStream().flush();
                    Thread.sleep(5_000);
                }
                return null;
            });
            long start = System.nanoTime();
            String why = assertThrows(BootstrapException.class,
                    () -> Bootstrap.join(config(1, 2, other), PeerFailureListener.NONE)).getMessage();
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(why.contains("is not a gda4j bootstrap root"), why);
            assertTrue(millis < 5_000, "named after " + millis + " ms");
        }
    }
}
