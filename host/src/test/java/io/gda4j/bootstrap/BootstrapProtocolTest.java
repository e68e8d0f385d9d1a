package io.gda4j.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.bootstrap.BootstrapFrameDescriptor.Frame;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An authenticated peer (its frames carry the right MACs) that breaks the protocol: parts of the wrong collective or
 * over the limit, frames that do not parse. It is failed at once and named, without a stack trace, and every call
 * waiting on it fails with it, long before any timeout.
 */
@Timeout(60)
class BootstrapProtocolTest {
    private static final String TOKEN = "job-protocol-3b8e6d0f2a";
    /** Far longer than any check here may take: a failure that waits for it was not found at once. */
    private static final long TIMEOUT_MILLIS = 15_000;
    private static final long AT_ONCE_MILLIS = 5_000;
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private final LinkedBlockingQueue<String> uncaught = new LinkedBlockingQueue<>();
    private Thread.UncaughtExceptionHandler before;
    private ServerSocket server;

    @BeforeEach
    void watchThreads() throws IOException {
        before = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((t, e) -> uncaught.add(t.getName() + ": " + e));
        server = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50)
                .socket();
    }

    @AfterEach
    void stop() throws IOException {
        pool.shutdownNow();
        server.close();
        Thread.setDefaultUncaughtExceptionHandler(before);
    }

    private BootstrapConfig config(int rank, int size, int maxMessageBytes) {
        return new BootstrapConfig(rank, size, new InetSocketAddress("127.0.0.1", server.getLocalPort()), TOKEN,
                TIMEOUT_MILLIS, TIMEOUT_MILLIS, 200, 30_000, maxMessageBytes);
    }

    private Future<Bootstrap> root(int size, int maxMessageBytes) {
        return pool.submit(() -> Bootstrap.join(config(0, size, maxMessageBytes), PeerFailureListener.NONE, server));
    }

    private void assertNoStackTrace() {
        assertTrue(uncaught.isEmpty(), "a bootstrap thread died: " + uncaught);
    }

    /** The message of the failure {@code call} throws, which must name {@code rank} and come at once. */
    private static String failureNaming(int rank, Future<?> call) throws Exception {
        long start = System.nanoTime();
        Exception e = assertThrows(java.util.concurrent.ExecutionException.class,
                () -> call.get(TIMEOUT_MILLIS + 5_000, TimeUnit.MILLISECONDS));
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(e.getCause() instanceof PeerFailedException, "not a peer failure: " + e.getCause());
        PeerFailedException p = (PeerFailedException) e.getCause();
        assertEquals(rank, p.deadRank(), p.getMessage());
        assertTrue(millis < AT_ONCE_MILLIS, "found after " + millis + " ms: " + p.getMessage());
        return p.getMessage();
    }

    /**
     * Rank 1 takes part in barrier #1, then sends a part of a collective other than its next one (#2): a future one,
     * a negative one, an old one, or #1 again after it completed. Each used to open a round the root kept forever (a
     * flood of them filled its heap); now rank 1 is failed at once, and the root's own barrier #2 fails with it.
     */
    @ParameterizedTest(name = "collective #{0}")
    @ValueSource(longs = {5, -3, 0, 1})
    void aPartOfAnyCollectiveButTheNextFailsTheRankAtOnce(long seq) throws Exception {
        Future<Bootstrap> root = root(2, 1024);
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort())) {
            s.setSoTimeout(20_000);
            RawRank.Session rank1 = RawRank.join(s, 1, 2, TOKEN);
            try (Bootstrap b = root.get(10, TimeUnit.SECONDS)) {
                Future<Void> first = barrierOn(b);
                rank1.send(BootstrapFrameDescriptor.COLLECTIVE, BootstrapFrameDescriptor.collective(1,
                        BootstrapFrameDescriptor.KIND_BARRIER, new byte[0]));
                first.get(10, TimeUnit.SECONDS);
                assertEquals(BootstrapFrameDescriptor.RESULT, nextBesidesHeartbeats(rank1).type());
                Future<Void> second = barrierOn(b);
                Thread.sleep(100); // the root is inside barrier #2
                rank1.send(BootstrapFrameDescriptor.COLLECTIVE, BootstrapFrameDescriptor.collective(seq,
                        BootstrapFrameDescriptor.KIND_BARRIER, new byte[0]));
                String why = failureNaming(1, second);
                assertTrue(why.contains("sent its part of collective #" + seq + " while the next collective is #2"),
                        why);
                Frame verdict = nextBesidesHeartbeats(rank1);
                assertEquals(BootstrapFrameDescriptor.PEER_FAILED, verdict.type(), "the rank is told why");
                assertEquals(1, verdict.buffer().getInt());
            }
        }
        assertNoStackTrace();
    }

    /** The root's barrier, on a thread of its own. */
    private Future<Void> barrierOn(Bootstrap b) {
        return pool.submit(() -> {
            b.barrier();
            return null;
        });
    }

    private static Frame nextBesidesHeartbeats(RawRank.Session s) throws IOException {
        while (true) {
            Frame f = s.read(1 << 20);
            if (f.type() != BootstrapFrameDescriptor.HEARTBEAT) {
                return f;
            }
        }
    }

    /**
     * Rank 2 sends a part over the limit (by 1 byte, or by the 53 that used to pass under the frame's slack); the root
     * fails it at once, and the honest rank 1 hears that rank 2 failed, instead of blaming the root for a result over
     * its own limit.
     */
    @ParameterizedTest(name = "{0} byte(s) over")
    @ValueSource(ints = {1, 53})
    void aPartOverTheLimitFailsItsRankAtTheRoot(int over) throws Exception {
        int limit = 1024;
        int size = 3;
        Future<Bootstrap> root = root(size, limit);
        Future<Bootstrap> rank1 = pool.submit(() -> Bootstrap.join(config(1, size, limit), PeerFailureListener.NONE));
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort())) {
            s.setSoTimeout(20_000);
            RawRank.Session rank2 = RawRank.join(s, 2, size, TOKEN);
            try (Bootstrap b0 = root.get(10, TimeUnit.SECONDS); Bootstrap b1 = rank1.get(10, TimeUnit.SECONDS)) {
                Future<byte[][]> g0 = pool.submit(() -> b0.allGather(new byte[limit]));
                Future<byte[][]> g1 = pool.submit(() -> b1.allGather(new byte[limit]));
                rank2.send(BootstrapFrameDescriptor.COLLECTIVE, BootstrapFrameDescriptor.collective(1,
                        BootstrapFrameDescriptor.KIND_ALL_GATHER, new byte[limit + over]));
                String rootWhy = failureNaming(2, g0);
                assertTrue(rootWhy.contains("limit"), rootWhy);
                String rank1Why = failureNaming(2, g1);
                assertTrue(rank1Why.contains("limit"), rank1Why);
            }
        }
        assertNoStackTrace();
    }

    /**
     * The root (played by hand, its frames with the right MACs) answers rank 1's all-gather with a frame that does
     * not parse. Each used to kill rank 1's reader with an unchecked exception (a stack trace, then silence until
     * dead-after); now rank 1 fails naming the root at once.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"a negative part length", "a part longer than the frame", "a result of too many parts",
            "bytes after the last part", "the failure of rank 99", "an abort of rank 99", "an unknown frame type"})
    void aMalformedFrameFromTheRootFailsItAtOnceWithoutAStackTrace(String what) throws Exception {
        Future<Bootstrap> member = pool.submit(() -> Bootstrap.join(config(1, 2, 1024), PeerFailureListener.NONE));
        try (Socket s = server.accept()) {
            s.setSoTimeout(20_000);
            RawRank.Session root = RawRank.welcome(s, TOKEN);
            try (Bootstrap b = member.get(10, TimeUnit.SECONDS)) {
                Future<byte[][]> gather = pool.submit(() -> b.allGather(new byte[] {1}));
                assertEquals(BootstrapFrameDescriptor.COLLECTIVE, nextBesidesHeartbeats(root).type());
                ByteBuffer result = ByteBuffer.allocate(64).putLong(1);
                switch (what) {
                    case "a negative part length" -> result.putInt(2).putInt(-5);
                    case "a part longer than the frame" -> result.putInt(2).putInt(1).put((byte) 0).putInt(40);
                    case "a result of too many parts" -> result.putInt(3);
                    case "bytes after the last part" -> result.putInt(2).putInt(0).putInt(0).putInt(7);
                    default -> {
                    }
                }
                byte type = BootstrapFrameDescriptor.RESULT;
                byte[] body = java.util.Arrays.copyOf(result.array(), result.position());
                if (what.equals("the failure of rank 99")) {
                    type = BootstrapFrameDescriptor.PEER_FAILED;
                    body = BootstrapFrameDescriptor.peerFailed(99, "made up");
                } else if (what.equals("an abort of rank 99")) {
                    type = BootstrapFrameDescriptor.ABORT;
                    body = BootstrapFrameDescriptor.abort(99, "made up");
                } else if (what.equals("an unknown frame type")) {
                    type = 99;
                    body = new byte[3];
                }
                root.send(type, body);
                String why = failureNaming(0, gather);
                assertTrue(why.contains("rank 0 failed: sent"), why);
            }
        }
        assertNoStackTrace();
    }

    /** A handful of bad frames from a rank at the root: each fails only that rank, at once, named. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"a part too short for its header", "a barrier that carries bytes",
            "a collective of an unknown kind", "an abort of another rank", "a heartbeat with a body"})
    void aMalformedFrameFromARankFailsItAtTheRoot(String what) throws Exception {
        Future<Bootstrap> root = root(2, 1024);
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort())) {
            s.setSoTimeout(20_000);
            RawRank.Session rank1 = RawRank.join(s, 1, 2, TOKEN);
            try (Bootstrap b = root.get(10, TimeUnit.SECONDS)) {
                Future<Void> barrier = barrierOn(b);
                Thread.sleep(100);
                switch (what) {
                    case "a part too short for its header" -> rank1.send(BootstrapFrameDescriptor.COLLECTIVE,
                            new byte[3]);
                    case "a barrier that carries bytes" -> rank1.send(BootstrapFrameDescriptor.COLLECTIVE,
                            BootstrapFrameDescriptor.collective(1, BootstrapFrameDescriptor.KIND_BARRIER,
                                    new byte[4]));
                    case "a collective of an unknown kind" -> rank1.send(BootstrapFrameDescriptor.COLLECTIVE,
                            BootstrapFrameDescriptor.collective(1, (byte) 9, new byte[0]));
                    case "an abort of another rank" -> rank1.send(BootstrapFrameDescriptor.ABORT,
                            BootstrapFrameDescriptor.abort(0, "made up"));
                    default -> rank1.send(BootstrapFrameDescriptor.HEARTBEAT, new byte[2]);
                }
                String why = failureNaming(1, barrier);
                assertTrue(why.contains("rank 1 failed: sent"), why);
            }
        }
        assertNoStackTrace();
    }
}
