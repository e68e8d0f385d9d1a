package io.gda4j.bootstrap;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.StringJoiner;

/**
 * A rank in its own JVM for {@link BootstrapProcessesTest}; talks to the test by lines on stdout.
 * Arguments: rank size port token mode. Rank 0 is given port 0, binds an ephemeral port and prints {@code PORT p}.
 * Modes: {@code gather} (all-gathers and barriers, prints what it got, exits 0) and {@code survive:V} (a barrier,
 * {@code READY}, then rank V sleeps until killed and the others enter a barrier that V never enters: they print
 * {@code DETECTED} when it fails) and {@code stopped:V} (the same with a dead-after of 1.5 s; the test stops V with
 * SIGSTOP during its sleep and resumes it later: V enters the barrier then and prints its own {@code DETECTED}),
 * and {@code stoppedGather:V} (V prints {@code GATHERING} and enters an all-gather of 8 MiB per rank at once, the
 * others 1.5 s later, so that the root sends V its 24 MiB result while the test has V stopped; then a barrier),
 * and {@code timedJoin} (for {@link BootstrapJoinTiming}: prints {@code LOADED}, waits for a line {@code GO} on stdin,
 * joins and prints {@code JOINED rank startNanos endNanos cpuNanos}: the first two from {@link System#nanoTime},
 * which is one clock for every process of a Linux host, the last the process's CPU time the join took; then a
 * barrier and close). Modes of one rank, the others in the test: {@code bigGather}
 * (the root, parts of 8 MiB: an all-gather it checks, {@code GATHERED}, a barrier), {@code fdRoot} (the root with
 * room for 1000 pending connections: {@code FDS n}, its open descriptors, then a barrier and {@code DONE}) and
 * {@code oomMember} (rank 1, parts of up to 48 MiB: an all-gather whose failure it prints, {@code FAILED why}).
 */
public final class BootstrapChild {
    private BootstrapChild() {
    }

    public static void main(String[] args) throws Exception {
        int rank = Integer.parseInt(args[0]);
        int size = Integer.parseInt(args[1]);
        int port = Integer.parseInt(args[2]);
        String token = args[3];
        String mode = args[4];
        PeerFailureListener listener = (dead, why) -> say("LISTENER " + rank + " dead=" + dead + " " + why);
        if (mode.equals("timedJoin")) {
            timedJoin(rank, size, port, token, listener);
            return;
        } else if (mode.equals("bigGather") || mode.equals("fdRoot") || mode.equals("oomMember")) {
            oneRank(rank, size, port, token, mode);
            return;
        }
        Bootstrap b;
        if (rank == 0) {
            ServerSocket server = listen();
            BootstrapConfig c = BootstrapConfig.of(0, size, new InetSocketAddress("127.0.0.1",
                    server.getLocalPort()), token).withTimeouts(30_000, 60_000);
            b = Bootstrap.join(liveness(c, mode), listener, server);
        } else {
            b = Bootstrap.join(liveness(BootstrapConfig.of(rank, size, new InetSocketAddress("127.0.0.1", port), token)
                    .withTimeouts(30_000, 60_000), mode), listener);
        }
        if (mode.equals("gather")) {
            for (int round = 0; round < 3; round++) {
                byte[][] all = b.allGather(("r" + rank + "x" + round).getBytes(StandardCharsets.UTF_8));
                StringJoiner j = new StringJoiner(",");
                for (byte[] part : all) {
                    j.add(new String(part, StandardCharsets.UTF_8));
                }
                say("GATHER " + rank + " " + j);
                b.barrier();
            }
            say("DONE " + rank);
            b.close();
            System.exit(0);
        }
        int victim = Integer.parseInt(mode.substring(mode.indexOf(':') + 1));
        b.barrier();
        say("READY " + rank);
        if (mode.startsWith("stoppedGather:")) {
            if (rank == victim) {
                say("GATHERING " + rank);
            } else {
                Thread.sleep(1_500);
            }
            try {
                b.allGather(new byte[8 << 20]);
                b.barrier(); // fails at the latest here: the victim is dead to the others, and to itself
                say("ERROR " + rank + " the barrier completed without the stopped rank");
            } catch (PeerFailedException e) {
                say("DETECTED " + rank + " dead=" + e.deadRank() + " " + e.getMessage());
            }
            b.close();
            say("CLOSED " + rank);
            System.exit(0);
        }
        if (rank == victim && mode.startsWith("stopped:")) {
            Thread.sleep(3_000); // stopped by the test meanwhile; after SIGCONT it goes on at once
        } else if (rank == victim) {
            Thread.sleep(Long.MAX_VALUE); // waits for its SIGKILL
        }
        try {
            b.barrier(); // the killed rank never enters: only its death ends this call
            say("ERROR " + rank + " the barrier completed without the killed rank");
        } catch (PeerFailedException e) {
            say("DETECTED " + rank + " dead=" + e.deadRank() + " " + e.getMessage());
        }
        long start = System.nanoTime();
        b.close();
        say("CLOSED " + rank + " in " + (System.nanoTime() - start) / 1_000_000 + " ms");
        System.exit(0);
    }

    private static void timedJoin(int rank, int size, int port, String token, PeerFailureListener listener)
            throws Exception {
        ServerSocket server = rank == 0 ? listen() : null;
        if (server != null) {
            port = server.getLocalPort();
        }
        BootstrapConfig c = BootstrapConfig.of(rank, size, new InetSocketAddress("127.0.0.1", port), token)
                .withTimeouts(60_000, 60_000);
        say("LOADED " + rank);
        java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in,
                StandardCharsets.UTF_8));
        if (!"GO".equals(in.readLine())) {
            throw new IllegalStateException("expected GO on stdin");
        }
        com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean)
                java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        long cpuBefore = os.getProcessCpuTime();
        long start = System.nanoTime();
        Bootstrap b = rank == 0 ? Bootstrap.join(c, listener, server) : Bootstrap.join(c, listener);
        long end = System.nanoTime();
        say("JOINED " + rank + " " + start + " " + end + " " + (os.getProcessCpuTime() - cpuBefore));
        b.barrier();
        b.close();
        System.exit(0);
    }

    /** The root's socket at an ephemeral loopback port, which it prints: {@code PORT p}. */
    private static ServerSocket listen() throws java.io.IOException {
        ServerSocket server = ServerSocketChannel.open()
                .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1024).socket();
        say("PORT " + server.getLocalPort());
        return server;
    }

    /** The part rank {@code r} gives in {@code bigGather}: recognisable bytes, so that a mix-up shows. */
    static byte[] partOf(int r, int bytes) {
        byte[] b = new byte[bytes];
        for (int i = 0; i < bytes; i++) {
            b[i] = (byte) (r * 29 + i * 13);
        }
        return b;
    }

    static final int BIG_PART_BYTES = 8 << 20;
    static final int OOM_LIMIT_BYTES = 48 << 20;

    private static void oneRank(int rank, int size, int port, String token, String mode) throws Exception {
        ServerSocket server = rank == 0 ? listen() : null;
        if (server != null) {
            port = server.getLocalPort();
        }
        BootstrapConfig c = BootstrapConfig.of(rank, size, new InetSocketAddress("127.0.0.1", port), token)
                .withTimeouts(30_000, 60_000);
        if (mode.equals("bigGather")) {
            c = c.withMaxMessageBytes(BIG_PART_BYTES);
        } else if (mode.equals("fdRoot")) {
            c = c.withHelloLimits(c.helloTimeoutMillis(), 1000);
            loadBootstrapClasses();
            try (java.util.stream.Stream<java.nio.file.Path> fds = java.nio.file.Files.list(
                    java.nio.file.Path.of("/proc/self/fd"))) {
                say("FDS " + fds.count());
            }
        } else {
            c = c.withMaxMessageBytes(OOM_LIMIT_BYTES);
        }
        Bootstrap b = rank == 0 ? Bootstrap.join(c, PeerFailureListener.NONE, server)
                : Bootstrap.join(c, PeerFailureListener.NONE);
        if (mode.equals("oomMember")) {
            try {
                b.allGather(new byte[1]);
                say("ERROR the all-gather completed");
            } catch (BootstrapException e) {
                say("FAILED " + e.getMessage());
            }
            b.close();
            System.exit(0);
        }
        if (mode.equals("bigGather")) {
            byte[][] all = b.allGather(partOf(0, BIG_PART_BYTES));
            for (int r = 0; r < size; r++) {
                if (!java.util.Arrays.equals(partOf(r, BIG_PART_BYTES), all[r])) {
                    say("ERROR rank " + r + "'s part differs");
                    System.exit(1);
                }
            }
            all = null; // the barrier needs none of it
            say("GATHERED " + size + " x " + BIG_PART_BYTES + " bytes");
        }
        b.barrier();
        say("DONE " + rank);
        b.close();
        System.exit(0);
    }

    /**
     * Loads every class of the bootstrap now: here they come from a directory, a file to open each, which a process
     * out of descriptors could not; from a jar (opened once) they would need none.
     */
    private static void loadBootstrapClasses() throws Exception {
        java.nio.file.Path dir = java.nio.file.Path.of(Bootstrap.class.getProtectionDomain().getCodeSource()
                .getLocation().toURI()).resolve("io/gda4j/bootstrap");
        try (java.util.stream.Stream<java.nio.file.Path> classes = java.nio.file.Files.list(dir)) {
            for (java.nio.file.Path p : (Iterable<java.nio.file.Path>) classes::iterator) {
                String file = p.getFileName().toString();
                if (file.endsWith(".class")) {
                    Class.forName("io.gda4j.bootstrap." + file.substring(0, file.length() - 6), true,
                            Bootstrap.class.getClassLoader());
                }
            }
        }
    }

    private static BootstrapConfig liveness(BootstrapConfig c, String mode) {
        if (mode.startsWith("stoppedGather:")) {
            return c.withLiveness(200, 1_500).withMaxMessageBytes(8 << 20);
        }
        return mode.startsWith("stopped:") ? c.withLiveness(200, 1_500) : c;
    }

    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
