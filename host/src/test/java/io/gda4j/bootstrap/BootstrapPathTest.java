package io.gda4j.bootstrap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.ServerSocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.UnaryOperator;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Ranks as threads, the last of them reaching the root through a {@link LoopbackRelay}: a slow path, and a path that
 * changes a byte.
 */
@Timeout(60)
class BootstrapPathTest {
    private static final String TOKEN = "job-path-5e1c9a7b3d";
    private static final int SIZE = 3;
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        pool.shutdownNow();
        for (AutoCloseable c : closing) {
            c.close();
        }
    }

    private static byte[] partOf(int rank, int bytes) {
        byte[] b = new byte[bytes];
        for (int i = 0; i < bytes; i++) {
            b[i] = (byte) (rank * 61 + i * 7);
        }
        return b;
    }

    /** Rank 0 on {@code server}, rank 1 directly, rank 2 through {@code relay}; each runs {@code body}. */
    private List<Future<String>> world(ServerSocket server, LoopbackRelay relay,
                                       UnaryOperator<BootstrapConfig> tune, RankBody body) {
        List<Future<String>> out = new ArrayList<>();
        for (int r = 0; r < SIZE; r++) {
            int rank = r;
            InetSocketAddress root = rank == SIZE - 1 ? relay.address()
                    : new InetSocketAddress("127.0.0.1", server.getLocalPort());
            BootstrapConfig c = tune.apply(BootstrapConfig.of(rank, SIZE, root, TOKEN).withTimeouts(15_000, 30_000));
            out.add(pool.submit(() -> {
                try (Bootstrap b = rank == 0 ? Bootstrap.join(c, PeerFailureListener.NONE, server)
                        : Bootstrap.join(c, PeerFailureListener.NONE)) {
                    return body.run(b);
                }
            }));
        }
        return out;
    }

    interface RankBody {
        String run(Bootstrap b) throws Exception;
    }

    private ServerSocket listen() throws IOException {
        ServerSocket s = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50)
                .socket();
        closing.add(s);
        return s;
    }

    private LoopbackRelay relay(ServerSocket server, LoopbackRelay.Direction up, LoopbackRelay.Direction down)
            throws IOException {
        LoopbackRelay r = new LoopbackRelay(server.getLocalPort(), up, down);
        closing.add(r);
        return r;
    }

    /**
     * On a path of 256 KiB/s each way, rank 2's 384 KiB part takes 1.5 s to reach the root and the 1.1 MiB result
     * 4.5 s to reach rank 2, with a dead-after of 1 s and the heartbeats queued behind the frames: the bytes that keep
     * coming keep both sides alive, and every rank gets every part.
     */
    @Test
    void aSlowPathDeclaresNoOneDeadWhileALargeFrameIsArriving() throws Exception {
        int partBytes = 384 << 10;
        ServerSocket server = listen();
        LoopbackRelay relay = relay(server, LoopbackRelay.Direction.throttled(256 << 10),
                LoopbackRelay.Direction.throttled(256 << 10));
        List<Future<String>> ranks = world(server, relay,
                c -> c.withLiveness(100, 1_000).withMaxMessageBytes(partBytes), b -> {
                    byte[][] all = b.allGather(partOf(b.rank(), partBytes));
                    for (int r = 0; r < SIZE; r++) {
                        assertArrayEquals(partOf(r, partBytes), all[r], "rank " + b.rank() + " got rank " + r);
                    }
                    b.barrier();
                    return "gathered";
                });
        for (int r = 0; r < SIZE; r++) {
            assertEquals("gathered", ranks.get(r).get(40, TimeUnit.SECONDS), "rank " + r);
        }
    }

    /** Flips one byte of the first frame of {@code type} whose body is long enough, {@code at} bytes into the body. */
    private static UnaryOperator<byte[]> flipOnce(byte type, int at) {
        AtomicBoolean done = new AtomicBoolean();
        return frame -> {
            int index = BootstrapFrameDescriptor.BODY_OFFSET + at;
            if (frame[BootstrapFrameDescriptor.TYPE_OFFSET] == type && frame.length > index
                    && done.compareAndSet(false, true)) {
                frame[index] ^= 0x01;
            }
            return frame;
        };
    }

    /**
     * A program on rank 2's path that passed the handshake through changes one byte of an all-gather part (the parts
     * carry CUDA IPC handles): on the way to the root, or on the way back in the result. The receiver finds the frame's
     * MAC wrong and fails its sender, named, and no rank ever gets the changed bytes.
     */
    @ParameterizedTest(name = "changed on the way {0}")
    @ValueSource(strings = {"up", "down"})
    void aByteChangedOnThePathIsDetectedAndNamed(String way) throws Exception {
        int partBytes = 64;
        ServerSocket server = listen();
        boolean up = way.equals("up");
        // up: the first byte of rank 2's part; down: the first byte of rank 0's part in rank 2's result
        LoopbackRelay relay = up
                ? relay(server, LoopbackRelay.Direction.rewriting(flipOnce(BootstrapFrameDescriptor.COLLECTIVE,
                BootstrapFrameDescriptor.COLLECTIVE_PART_OFFSET)), LoopbackRelay.Direction.FREE)
                : relay(server, LoopbackRelay.Direction.FREE, LoopbackRelay.Direction.rewriting(flipOnce(
                BootstrapFrameDescriptor.RESULT, BootstrapFrameDescriptor.RESULT_PARTS_OFFSET
                        + BootstrapFrameDescriptor.RESULT_PART_LENGTH_BYTES)));
        List<Future<String>> ranks = world(server, relay, c -> c, b -> {
            try {
                byte[][] all = b.allGather(partOf(b.rank(), partBytes));
                for (int r = 0; r < SIZE; r++) {
                    assertArrayEquals(partOf(r, partBytes), all[r], "rank " + b.rank() + " got rank " + r);
                }
                b.barrier();
                return "gathered";
            } catch (PeerFailedException e) {
                return e.deadRank() + " " + e.getMessage();
            }
        });
        List<String> outcomes = new ArrayList<>();
        for (int r = 0; r < SIZE; r++) {
            outcomes.add(ranks.get(r).get(30, TimeUnit.SECONDS));
        }
        for (int r = 0; r < SIZE; r++) {
            String o = outcomes.get(r) + " (all: " + outcomes + ")";
            // whoever read the changed frame names its sender; the others hear of the rank that was dropped
            boolean readIt = up ? r == 0 : r == SIZE - 1;
            int named = up || r != SIZE - 1 ? SIZE - 1 : 0;
            assertTrue(outcomes.get(r).startsWith(named + " rank " + named + " failed"), "rank " + r + ": " + o);
            if (readIt || up) {
                assertTrue(o.contains("MAC is wrong") && o.contains("changed on the way"), "rank " + r + ": " + o);
            }
        }
    }
}
