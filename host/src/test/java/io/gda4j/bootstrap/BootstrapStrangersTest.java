package io.gda4j.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gda4j.bootstrap.BootstrapFrameDescriptor.Frame;

import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.channels.ServerSocketChannel;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Clients that are not ranks of the job (short frames, idle or slow hellos, readers that stop) against a root. */
@Timeout(60)
class BootstrapStrangersTest {
    private static final String TOKEN = "job-strangers-7f3a9c";
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private final List<Socket> strangers = new ArrayList<>();

    @AfterEach
    void stop() {
        pool.shutdownNow();
        for (Socket s : strangers) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing test sockets: nothing to do
            }
        }
    }

    private static ServerSocket listen() throws IOException {
        // the root's gate selects on the socket's channel
        return ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 200)
                .socket();
    }

    private static BootstrapConfig config(int rank, int size, ServerSocket root) {
        return BootstrapConfig.of(rank, size, new InetSocketAddress("127.0.0.1", root.getLocalPort()), TOKEN)
                .withTimeouts(15_000, 15_000);
    }

    private Future<Void> rank(BootstrapConfig c, ServerSocket server) {
        return pool.submit(() -> {
            try (Bootstrap b = c.rank() == 0 ? Bootstrap.join(c, PeerFailureListener.NONE, server)
                    : Bootstrap.join(c, PeerFailureListener.NONE)) {
                b.barrier();
            }
            return null;
        });
    }

    private static long openFileDescriptors() throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        }
    }

    /** Reads until the root closes; at most one REFUSE before that. Fails when the root keeps it open. */
    private static void assertClosedByRoot(Socket s) throws IOException {
        InputStream in = s.getInputStream();
        try {
            Frame f = BootstrapFrameDescriptor.read(in, 4096);
            assertEquals(BootstrapFrameDescriptor.REFUSE, f.type(), f.text());
            assertEquals(-1, in.read(), "the root closes a refused connection");
        } catch (SocketTimeoutException e) {
            throw new AssertionError("the root left the connection open", e);
        } catch (IOException e) {
            // closed (EOF or reset) without a REFUSE: fine
        }
    }

    /** A length prefix and part of a body, then EOF: refused and closed, no stack trace, no leaked descriptor. */
    @Test
    void aShortHelloIsClosedWithoutACrashOrALeak() throws Exception {
        int size = 2;
        ServerSocket server = listen();
        LinkedBlockingQueue<Throwable> uncaught = new LinkedBlockingQueue<>();
        Thread.UncaughtExceptionHandler before = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((t, e) -> uncaught.add(e));
        try {
            Future<Void> root = rank(config(0, size, server), server);
            long fdsBefore = openFileDescriptors();
            for (int i = 0; i < 50; i++) {
                try (Socket s = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort())) {
                    s.setSoTimeout(3_000);
                    DataOutputStream out = new DataOutputStream(s.getOutputStream());
                    out.writeInt(40); // a 40-byte frame ...
                    out.writeByte(BootstrapFrameDescriptor.HELLO);
                    out.writeInt(BootstrapFrameDescriptor.MAGIC); // ... of which 5 bytes come
                    out.flush();
                    s.shutdownOutput();
                    assertClosedByRoot(s);
                }
            }
            long fdsAfter = openFileDescriptors();
            assertTrue(fdsAfter - fdsBefore < 20, "descriptors " + fdsBefore + " -> " + fdsAfter);
            rank(config(1, size, server), server).get(20, TimeUnit.SECONDS);
            root.get(20, TimeUnit.SECONDS);
            assertTrue(uncaught.isEmpty(), "uncaught in the root: " + uncaught);
        } finally {
            Thread.setDefaultUncaughtExceptionHandler(before);
        }
    }

    /** Opens a connection from {@code source} that says nothing. */
    private Socket idle(String source, int port) throws IOException {
        Socket s = new Socket();
        strangers.add(s);
        s.bind(new InetSocketAddress(source, 0));
        s.connect(new InetSocketAddress("127.0.0.1", port));
        s.setSoTimeout(10_000);
        return s;
    }

    /**
     * Strangers that say hello and then never prove the token hold every handshake slot, with a handshake deadline
     * of 30 s: the real ranks evict them, oldest first, and join at once instead of waiting for a slot.
     */
    @Test
    void strangersHoldingEverySlotAreEvictedForTheRanks() throws Exception {
        int size = 3;
        ServerSocket server = listen();
        int port = server.getLocalPort();
        Future<Void> root = rank(config(0, size, server).withHelloLimits(30_000, 4), server);
        List<Socket> stalled = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Socket s = idle("127.0.0.1", port);
            BootstrapFrameDescriptor.write(s.getOutputStream(), BootstrapFrameDescriptor.HELLO,
                    BootstrapFrameDescriptor.hello(1, size, BootstrapFrameDescriptor.nonce()));
            // challenged: a slot is held now, as far along as a real rank before its proof
            assertEquals(BootstrapFrameDescriptor.CHALLENGE, BootstrapFrameDescriptor.read(s.getInputStream(),
                    1024).type());
            stalled.add(s);
        }
        long millis = membersJoinMillis(size, server, root);
        assertTrue(millis < 10_000, "joined after " + millis + " ms, with a handshake deadline of 30 s");
        // the oldest stranger made room for a rank: closed without an answer
        stalled.get(0).setSoTimeout(5_000);
        assertEquals(-1, readOrReset(stalled.get(0)));
    }

    /** Starts ranks 1.. of a world of {@code size}; returns how long until they and {@code root} are done. */
    private long membersJoinMillis(int size, ServerSocket server, Future<Void> root) throws Exception {
        long start = System.nanoTime();
        List<Future<Void>> members = new ArrayList<>();
        for (int r = 1; r < size; r++) {
            members.add(rank(config(r, size, server), server));
        }
        for (Future<Void> f : members) {
            f.get(20, TimeUnit.SECONDS);
        }
        root.get(20, TimeUnit.SECONDS);
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }

    /** -1 at end of stream or on a reset; the byte otherwise. */
    private static int readOrReset(Socket s) throws IOException {
        try {
            return s.getInputStream().read();
        } catch (SocketTimeoutException e) {
            throw new AssertionError("the root left the connection open", e);
        } catch (IOException e) {
            return -1;
        }
    }

    /** Many more idle connections than slots, from another loopback address: the ranks join at once. */
    @Test
    void oneSourceCannotTakeEverySlot() throws Exception {
        int size = 3;
        ServerSocket server = listen();
        int port = server.getLocalPort();
        // a long hello deadline: joining in time proves the ranks got slots, not that the idle ones timed out
        Future<Void> root = rank(config(0, size, server).withHelloLimits(30_000, 8), server);
        for (int i = 0; i < 20; i++) {
            idle("127.0.0.2", port); // all of 127/8 is loopback on Linux
        }
        long millis = membersJoinMillis(size, server, root);
        assertTrue(millis < 10_000, "joined after " + millis + " ms");
    }

    /**
     * A process of the ranks' own host keeps {@code held} connections open and opens a new one the moment the root
     * closes one: as many as the old per-source quota (16, which let 0 of 2 ranks join in 60 s), and more than all
     * the slots (48 of 32, so that every newcomer evicts one). The ranks still join at once.
     */
    @ParameterizedTest(name = "{0} connections held")
    @ValueSource(ints = {16, 48})
    void aProcessReopeningConnectionsCannotKeepTheRanksOut(int held) throws Exception {
        int size = 3;
        ServerSocket server = listen();
        int port = server.getLocalPort();
        BootstrapConfig rootConfig = config(0, size, server);
        Future<Void> root = rank(held > 32 ? rootConfig.withHelloLimits(rootConfig.helloTimeoutMillis(), 32)
                : rootConfig, server);
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicLong opened = new java.util.concurrent.atomic.AtomicLong();
        for (int i = 0; i < held; i++) {
            pool.submit(() -> {
                while (!stop.get()) {
                    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
                        opened.incrementAndGet();
                        s.setSoTimeout(10_000);
                        s.getInputStream().read(); // until the root closes it
                    } catch (IOException e) {
                        // closed, reset or refused: open the next at once
                    }
                }
                return null;
            });
        }
        try {
            Thread.sleep(300); // the connections are held before the ranks come
            long millis = membersJoinMillis(size, server, root);
            assertTrue(millis < 10_000, "joined after " + millis + " ms; " + opened.get() + " connections opened");
        } finally {
            stop.set(true);
        }
    }

    /**
     * Eight connections guess the token as fast as the root answers, for 3 s: each refusal after a proof doubles the
     * back-off of their address (to 1 s), so they get tens of answers, not hundreds. A real rank from the same
     * address still joins afterwards.
     */
    @Test
    void guessingTheTokenOnlineGetsSlowerAndSlower() throws Exception {
        int size = 3;
        ServerSocket server = listen();
        Future<Void> root = rank(config(0, size, server), server);
        Future<Void> rank1 = rank(config(1, size, server), server);
        java.util.concurrent.atomic.AtomicInteger answers = new java.util.concurrent.atomic.AtomicInteger();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        List<Future<Void>> guessers = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            int guesser = i;
            guessers.add(pool.submit(() -> {
                for (int guess = 0; System.nanoTime() - until < 0; guess++) {
                    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort())) {
                        s.setSoTimeout(10_000);
                        Frame f = RawRank.handshake(s, 2, size, "guess-" + guesser + "-" + guess).answer();
                        assertEquals(BootstrapFrameDescriptor.SEALED_REFUSE, f.type());
                        answers.incrementAndGet();
                    }
                }
                return null;
            }));
        }
        for (Future<Void> g : guessers) {
            g.get(20, TimeUnit.SECONDS);
        }
        // at the back-off's steps (0, 50, 150, 350, 750, 1550, 2550 ms) each of the 8 gets one answer at most
        System.out.println(answers.get() + " wrong tokens answered in 3 s to 8 connections guessing at once");
        assertTrue(answers.get() <= 8 * 8, answers.get() + " wrong tokens answered in 3 s");
        rank(config(2, size, server), server).get(20, TimeUnit.SECONDS);
        rank1.get(20, TimeUnit.SECONDS);
        root.get(20, TimeUnit.SECONDS);
    }

    /**
     * Knocking as a rank that has joined, during the join and after it: the right token and a wrong one get the same
     * answer, a sealed refusal of one length, which only the root's token opens (to "already joined", "already
     * complete" or "wrong job token"). Plain answers used to tell the two apart.
     */
    @Test
    void theAnswerNeverTellsARightTokenFromAWrongOne() throws Exception {
        int size = 3;
        ServerSocket server = listen();
        java.util.concurrent.CountDownLatch checked = new java.util.concurrent.CountDownLatch(1);
        List<Future<Void>> ranks = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            BootstrapConfig c = config(r, size, server);
            ranks.add(pool.submit(() -> {
                try (Bootstrap b = c.rank() == 0 ? Bootstrap.join(c, PeerFailureListener.NONE, server)
                        : Bootstrap.join(c, PeerFailureListener.NONE)) {
                    b.barrier();
                    checked.await();
                }
                return null;
            }));
        }
        Thread.sleep(500); // rank 1 has joined; rank 2 has not
        knockTwiceAndCompare(server, size, "has already joined");
        rank(config(2, size, server), server);
        // once rank 2 is in, the world is complete
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        String answer;
        do {
            Thread.sleep(100);
            answer = knockTwiceAndCompare(server, size, null);
        } while (!answer.contains("already complete") && System.nanoTime() - until < 0);
        assertTrue(answer.contains("already complete"), answer);
        checked.countDown();
        for (Future<Void> f : ranks) {
            f.get(20, TimeUnit.SECONDS);
        }
    }

    /** Knocks as rank 1 with the right token and with a wrong one; returns what the right one reads. */
    private static String knockTwiceAndCompare(ServerSocket server, int size, String rightReads) throws IOException {
        RawRank.Handshake right;
        RawRank.Handshake wrong;
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort())) {
            s.setSoTimeout(10_000);
            right = RawRank.handshake(s, 1, size, TOKEN);
        }
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort())) {
            s.setSoTimeout(10_000);
            wrong = RawRank.handshake(s, 1, size, "not-" + TOKEN);
        }
        assertEquals(BootstrapFrameDescriptor.SEALED_REFUSE, right.answer().type(), right.answer().text());
        assertEquals(BootstrapFrameDescriptor.SEALED_REFUSE, wrong.answer().type(), wrong.answer().text());
        assertEquals(right.answer().body().length, wrong.answer().body().length);
        assertEquals(null, wrong.openedWith("not-" + TOKEN), "a wrong token cannot read its refusal");
        String wrongReads = wrong.openedWith(TOKEN);
        assertTrue(wrongReads != null && wrongReads.contains("wrong job token"), "the root's token reads "
                + wrongReads);
        String reads = right.openedWith(TOKEN);
        assertTrue(reads != null && (rightReads == null || reads.contains(rightReads)), "the right token reads "
                + reads);
        return reads;
    }

    /** A hello that trickles in a byte every 300 ms is dropped at its deadline, not held for as long as it lasts. */
    @Test
    void aTricklingHelloIsDroppedAtItsDeadline() throws Exception {
        int size = 2;
        ServerSocket server = listen();
        long helloMillis = 1_000;
        Future<Void> root = rank(config(0, size, server).withHelloLimits(helloMillis, 64), server);
        Socket s = idle("127.0.0.1", server.getLocalPort());
        java.io.ByteArrayOutputStream frame = new java.io.ByteArrayOutputStream();
        BootstrapFrameDescriptor.write(frame, BootstrapFrameDescriptor.HELLO,
                BootstrapFrameDescriptor.hello(1, size, BootstrapFrameDescriptor.nonce()));
        byte[] bytes = frame.toByteArray(); // tens of bytes: many seconds at 300 ms each
        long start = System.nanoTime();
        pool.submit(() -> {
            for (byte b : bytes) {
                s.getOutputStream().write(b);
                s.getOutputStream().flush();
                Thread.sleep(300);
            }
            return null;
        });
        s.setSoTimeout(8_000);
        assertClosedByRoot(s);
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(millis < helloMillis + 3_000, "dropped after " + millis + " ms (" + bytes.length + " bytes take "
                + bytes.length * 300 + " ms)");
        rank(config(1, size, server), server).get(20, TimeUnit.SECONDS);
        root.get(20, TimeUnit.SECONDS);
    }

    /**
     * Rank 2 joins properly, keeps sending heartbeats and its part of an all-gather, but never reads: the root's
     * result to it (16 MiB) cannot all be written. The root and rank 1 get their results, the root declares rank 2
     * dead for not reading, and every rank names rank 2, not the root, without waiting out a timeout.
     */
    @Test
    void aMemberThatStopsReadingIsDroppedAndNamedWhileTheOthersGoOn() throws Exception {
        int size = 3;
        int partBytes = 8 << 20;
        ServerSocket server = listen();
        java.util.function.IntFunction<BootstrapConfig> cfg = r -> config(r, size, server).withLiveness(200, 2_000)
                .withMaxMessageBytes(partBytes);
        List<Future<String>> ranks = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            int rank = r;
            ranks.add(pool.submit(() -> {
                BootstrapConfig c = cfg.apply(rank);
                Bootstrap b = rank == 0 ? Bootstrap.join(c, PeerFailureListener.NONE, server)
                        : Bootstrap.join(c, PeerFailureListener.NONE);
                try {
                    byte[][] all = b.allGather(new byte[partBytes]);
                    assertEquals(partBytes, all[1 - rank].length);
                    PeerFailedException e = org.junit.jupiter.api.Assertions.assertThrows(PeerFailedException.class,
                            b::barrier);
                    return e.deadRank() + " " + e.getMessage();
                } finally {
                    long start = System.nanoTime();
                    b.close();
                    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                    assertTrue(millis < 3_000, "rank " + rank + " closed in " + millis + " ms");
                }
            }));
        }
        Socket s = new Socket();
        strangers.add(s);
        s.setReceiveBufferSize(4096); // before connecting, so that the window stays small
        s.connect(new InetSocketAddress("127.0.0.1", server.getLocalPort()));
        s.setSoTimeout(10_000);
        RawRank.Session session = RawRank.join(s, 2, size, TOKEN);
        session.send(BootstrapFrameDescriptor.COLLECTIVE, BootstrapFrameDescriptor.collective(1,
                BootstrapFrameDescriptor.KIND_ALL_GATHER, new byte[] {2}));
        pool.submit(() -> {
            while (true) { // alive and talking, never reading
                session.send(BootstrapFrameDescriptor.HEARTBEAT, new byte[0]);
                Thread.sleep(100);
            }
        });
        for (int r = 0; r < 2; r++) {
            String why = ranks.get(r).get(20, TimeUnit.SECONDS);
            assertTrue(why.startsWith("2 rank 2 failed: stopped reading"), "rank " + r + ": " + why);
        }
    }

    private static boolean contains(byte[] haystack, byte[] needle) {
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            if (java.util.Arrays.equals(haystack, i, i + needle.length, needle, 0, needle.length)) {
                return true;
            }
        }
        return false;
    }

    /**
     * An impostor with a guessed token is refused and learns nothing of it: not the token, and not even the reason,
     * which is sealed with the root's token; the real ranks then join.
     */
    @Test
    void anImpostorWithAWrongTokenIsRefusedWithoutLearningIt() throws Exception {
        int size = 3;
        ServerSocket server = listen();
        Future<Void> root = rank(config(0, size, server), server);
        java.io.ByteArrayOutputStream heard = new java.io.ByteArrayOutputStream();
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort())) {
            s.setSoTimeout(10_000);
            RawRank.Handshake h = RawRank.handshake(s, 1, size, "torchrun:none");
            Frame f = h.answer();
            assertEquals(BootstrapFrameDescriptor.SEALED_REFUSE, f.type());
            assertEquals(null, h.openedWith("torchrun:none"), "the impostor cannot read the refusal");
            String why = h.openedWith(TOKEN);
            assertTrue(why != null && why.contains("wrong job token"), "the root's token reads: " + why);
            heard.write(f.body());
            s.getInputStream().transferTo(heard); // until the root closes
        }
        assertTrue(!contains(heard.toByteArray(), TOKEN.getBytes(java.nio.charset.StandardCharsets.UTF_8)),
                "the root sent its token");
        for (int r = 1; r < size; r++) {
            rank(config(r, size, server), server);
        }
        root.get(20, TimeUnit.SECONDS);
    }

    /**
     * A squatter on the root's port (it accepts, challenges and welcomes anyone) receives no token from a rank, and
     * the rank stops at its unproven welcome instead of joining it.
     */
    @Test
    void aSquatterOnThePortLearnsNoTokenAndIsNotJoined() throws Exception {
        ServerSocket squatter = listen();
        java.io.ByteArrayOutputStream heard = new java.io.ByteArrayOutputStream();
        Future<Void> squat = pool.submit(() -> {
            try (Socket s = squatter.accept()) {
                s.setSoTimeout(10_000);
                Frame hello = BootstrapFrameDescriptor.read(s.getInputStream(), 4096);
                heard.write(hello.body());
                BootstrapFrameDescriptor.write(s.getOutputStream(), BootstrapFrameDescriptor.CHALLENGE,
                        BootstrapFrameDescriptor.nonce());
                Frame proof = BootstrapFrameDescriptor.read(s.getInputStream(), 4096);
                heard.write(proof.body());
                BootstrapFrameDescriptor.write(s.getOutputStream(), BootstrapFrameDescriptor.WELCOME,
                        new byte[BootstrapFrameDescriptor.PROOF_BYTES]);
                BootstrapFrameDescriptor.write(s.getOutputStream(), BootstrapFrameDescriptor.READY, new byte[0]);
                s.getInputStream().transferTo(heard);
            }
            return null;
        });
        String why = org.junit.jupiter.api.Assertions.assertThrows(BootstrapException.class,
                () -> Bootstrap.join(config(1, 2, squatter), PeerFailureListener.NONE)).getMessage();
        assertTrue(why.contains("does not know the job token"), why);
        squat.get(20, TimeUnit.SECONDS);
        assertTrue(heard.size() > 0, "the squatter heard the hello");
        assertTrue(!contains(heard.toByteArray(), TOKEN.getBytes(java.nio.charset.StandardCharsets.UTF_8)),
                "the rank sent its token to the squatter");
    }

    /** Given a loopback address, the root listens there only: another host could not reach it. */
    @Test
    void theRootListensOnTheLoopbackAddressItWasGiven() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        InetSocketAddress at = new InetSocketAddress("127.0.0.1", port);
        assertEquals(at, Bootstrap.listenAddress(InetSocketAddress.createUnresolved("127.0.0.1", port)));
        Future<Void> root = pool.submit(() -> {
            try (Bootstrap b = Bootstrap.join(BootstrapConfig.of(0, 2, at, TOKEN).withTimeouts(15_000, 15_000),
                    PeerFailureListener.NONE)) {
                b.barrier();
            }
            return null;
        });
        // once the root listens, the same port on another loopback address is free: it is not bound to every one
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            try (Socket s = new Socket()) {
                s.connect(at, 1_000);
                break;
            } catch (IOException e) {
                assertTrue(System.nanoTime() - until < 0, "the root never listened: " + e);
                Thread.sleep(50);
            }
        }
        try (ServerSocket other = new ServerSocket()) {
            other.bind(new InetSocketAddress("127.0.0.2", port));
        }
        rank(BootstrapConfig.of(1, 2, at, TOKEN).withTimeouts(15_000, 15_000), null).get(20, TimeUnit.SECONDS);
        root.get(20, TimeUnit.SECONDS);
    }
}
