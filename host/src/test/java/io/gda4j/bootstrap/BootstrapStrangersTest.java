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
        return new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
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
}
