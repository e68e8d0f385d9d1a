package io.gda4j.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gda4j.bootstrap.LaunchEnvironment;
import io.gda4j.config.Settings;
import io.gda4j.cuda.Cuda;
import io.gda4j.nic.NicConfig;
import io.gda4j.world.WorldConfig;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code gda4j latency} (over p2p, the proxy with either handler and ibgda on the emulated NIC), {@code gda4j bandwidth} and {@code gda4j compare} as two
 * processes started the way a launcher starts them (one rank each, both on GPU 0): rank 0's process prints the table, rank 1's prints nothing on
 * stdout, both exit 0.
 */
@Tag("gpu")
@Timeout(240)
class CommandsAcrossProcessesGpuTest {
    @Test
    void twoProcessesPingPongAndRankZeroReports() throws Exception {
        String[] out = acrossTwoProcesses("latency", "--mode", "signal,put_signal", "--sizes", "8,64k", "--scopes",
                "warp", "--iters", "200", "--warmup", "20", "--gpus", "0,0", "--csv");
        System.out.println("gda4j latency across two processes on GPU 0 (rank 0's output):\n" + out[0]);
        assertTrue(out[0].startsWith("mode,scope,size,bytes,iters,min_us,median_us,mean_us,stdev_us,p99_us,p99.9_us,"
                + "max_us"), out[0]);
        assertEquals(4, out[0].strip().split("\n").length,
                "a header and three rows (signal; put_signal 8 B and 64 KiB): " + out[0]);
        assertTrue(out[0].contains("signal,thread") && out[0].contains("put_signal,warp,64 KiB"), out[0]);
        assertEquals("", out[1], "rank 1 answers silently");
    }

    @Test
    void twoProcessesPingPongOverTheProxyIntoTheMappedHeap() throws Exception {
        String[] out = acrossTwoProcesses("latency", "--transport", "proxy", "--mode", "signal,put_signal", "--sizes",
                "8,64k", "--scopes", "thread", "--iters", "200", "--warmup", "20", "--gpus", "0,0", "--csv");
        System.out.println("gda4j latency over the proxy across two processes on GPU 0 (rank 0's output):\n" + out[0]);
        assertEquals(4, out[0].strip().split("\n").length, "a header and three rows: " + out[0]);
        assertTrue(out[0].contains("put_signal,thread,64 KiB"), out[0]);
        assertEquals("", out[1], "rank 1 answers silently");
    }

    @Test
    void twoProcessesPingPongOverIbgdaOnTheEmulatedNic() throws Exception {
        String out = pingPongOnGpu0(false, "over ibgda (emulated NIC)", "--transport", "ibgda", "--nic", "emulated");
        assertTrue(out.contains("over ibgda between processes") && out.contains("on the emulated NIC"), out);
        assertTrue(out.contains("emulated NIC engine:"), "the engine note of rank 0's NIC: " + out);
    }

    @Test
    void twoProcessesPingPongOverTheProxysVerbsHandlerOnTheEmulatedNic() throws Exception {
        // Each process's proxy thread posts on its own emulated NIC toward the other's heap, under its credits.
        String out = pingPongOnGpu0(false, "over the proxy's verbs handler (emulated NIC)", "--transport", "proxy",
                "--proxy-handler", "verbs", "--nic", "emulated");
        assertTrue(out.contains("over proxy between processes")
                && out.contains("proxy handler: verbs on the emulated NIC"), out);
    }

    @Test
    void twoProcessesRunMoeCheckedAgainstTheReference() throws Exception {
        // --check: each process checks its own rank's dispatch and combine against the Java reference, bit for bit.
        String[] out = acrossTwoProcesses("moe", "--tokens", "64", "--hidden", "1024", "--experts", "16", "--topk", "4",
                "--channels", "4", "--dtype", "both", "--check", "--iters", "3", "--warmup", "1", "--gpus", "0,0",
                "--csv");
        System.out.println("gda4j moe across two processes on GPU 0 (rank 0's output):\n" + out[0]);
        assertTrue(out[0].startsWith("dtype,rows,tokens,dispatch_ms"), out[0]);
        assertEquals(3, out[0].strip().split("\n").length, "a header and a row per dtype: " + out[0]);
        assertEquals("", out[1], "rank 1 answers silently");
    }

    @Test
    void twoProcessesRunLowLatencyMoeCheckedAgainstTheReference() throws Exception {
        String[] out = acrossTwoProcesses("moe", "--mode", "low-latency", "--tokens", "16", "--hidden", "512",
                "--experts", "8", "--topk", "3", "--check", "--iters", "3", "--warmup", "1", "--gpus", "0,0", "--csv");
        System.out.println("gda4j moe --mode low-latency across two processes on GPU 0 (rank 0's output):\n" + out[0]);
        assertTrue(out[0].startsWith("dtype,tokens,dispatch_ms"), out[0]);
        assertEquals(2, out[0].strip().split("\n").length, "a header and one row (FP8): " + out[0]);
        assertEquals("", out[1], "rank 1 answers silently");
    }

    @Test
    void twoProcessesPutBandwidthAndRankZeroReports() throws Exception {
        String[] out = acrossTwoProcesses("bandwidth", "--sizes", "64k,1m", "--reps", "3", "--iters", "20", "--gpus",
                "0,0", "--csv");
        System.out.println("gda4j bandwidth across two processes on GPU 0 (rank 0's output):\n" + out[0]);
        assertTrue(out[0].startsWith("size,bytes,put_GBps,memcpyPeer_GBps,ratio"), out[0]);
        assertEquals(3, out[0].strip().split("\n").length, "a header and two rows: " + out[0]);
        assertEquals("", out[1], "rank 1 answers silently");
    }

    @Test
    void twoProcessesCompareTheTransportsThatConnectProcesses() throws Exception {
        String[] out = acrossTwoProcesses("compare", "--sizes", "8,64k", "--iters", "100", "--reps", "2", "--gpus",
                "0,0", "--csv");
        System.out.println("gda4j compare across two processes on GPU 0 (rank 0's output):\n" + out[0]);
        String header = out[0].lines().findFirst().orElse("");
        assertTrue(header.contains("p2p") && header.contains("proxy"), header);
        io.gda4j.nic.NicSelection nic = NicConfig.selection(Settings.ofProcess());
        assertEquals(nic.found() && nic.provider().name().equals(io.gda4j.nic.Nic.EMULATED), header.contains("ibgda"),
                "ibgda connects processes over the emulated NIC, and compare takes it where that is the NIC: " + header);
        assertEquals(3, out[0].strip().split("\n").length, "a header and two sizes: " + out[0]);
        assertEquals("", out[1], "rank 1 answers silently");
    }

    @Test
    void twoProcessesPutBandwidthOverTheProxyCopiesIntoTheMappedHeap() throws Exception {
        // The copy-engine column copies into the peer's heap as mapped by CUDA IPC; a proxy link's peer entry has no
        // heap address, so this case fails if the reference copied to the link's address instead.
        String[] out = acrossTwoProcesses("bandwidth", "--transport", "proxy", "--sizes", "64k,1m", "--reps", "3",
                "--iters", "20", "--gpus", "0,0", "--csv");
        System.out.println("gda4j bandwidth over the proxy across two processes on GPU 0 (rank 0's output):\n"
                + out[0]);
        assertEquals(3, out[0].strip().split("\n").length, "a header and two rows: " + out[0]);
        assertEquals("", out[1], "rank 1 answers silently");
    }

    /**
     * Two processes of this machine that count as two hosts (GDA4J_HOST_NAME host-a and host-b): nothing of either
     * heap is mapped into the other, p2p and the copy engine refuse the pair, and auto takes what reaches another
     * host through a NIC, here the emulated one (which reaches the peer's heap by CUDA IPC, as a wire).
     */
    @Test
    void twoNamedHostsPingPongOverIbgdaWhichAutoChoosesForAnotherHost() throws Exception {
        String out = pingPongOnGpu0(true, "with auto (emulated NIC)", "--nic", "emulated");
        assertTrue(out.contains("over ibgda between processes") && out.contains("on the emulated NIC"), out);
    }

    @Test
    void twoNamedHostsPingPongOverTheProxyWhoseAutoHandlerIsVerbsForAnotherHost() throws Exception {
        String out = pingPongOnGpu0(true, "over the proxy (emulated NIC)", "--transport", "proxy", "--nic", "emulated");
        assertTrue(out.contains("over proxy between processes"), out);
    }

    @Test
    void twoNamedHostsRunLowLatencyMoeOverIbgdaCheckedAgainstTheReference() throws Exception {
        String[] out = acrossTwoHosts("moe", "--mode", "low-latency", "--nic", "emulated", "--tokens", "16",
                "--hidden", "512", "--experts", "8", "--topk", "3", "--check", "--iters", "3", "--warmup", "1",
                "--gpus", "0,0", "--csv");
        System.out.println("gda4j moe --mode low-latency across two named hosts on GPU 0 (rank 0's output):\n"
                + out[0]);
        assertTrue(out[0].startsWith("dtype,tokens,dispatch_ms"), out[0]);
        assertEquals(2, out[0].strip().split("\n").length, "a header and one row (FP8): " + out[0]);
        assertEquals("", out[1], "rank 1 answers silently");
    }

    /** The p2p transport named across two named hosts is refused at start, saying why, in both processes. */
    @Test
    void p2pNamedBetweenTwoNamedHostsIsRefusedNamingTheOtherHost() throws Exception {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
        List<Process> ps = start(true, "latency", "--transport", "p2p", "--mode", "signal", "--iters", "10",
                "--gpus", "0,0");
        try {
            Ended ended = await(ps);
            for (int r = 0; r < 2; r++) {
                assertTrue(ended.finished[r], "a refused world ends its process" + ended.both());
                assertTrue(ps.get(r).exitValue() != 0 && ended.err[r].contains("runs on another host")
                        && ended.err[r].contains("p2p"), ended.both());
            }
        } finally {
            for (Process p : ps) {
                p.destroyForcibly();
            }
        }
    }

    /**
     * {@code gda4j latency} of signal and put_signal (8 B and 64 KiB, thread scope) between two processes on GPU 0,
     * with {@code transport}'s arguments, each process its own host where asked. Few rounds: the processes share the
     * GPU (time-sliced), and over the emulated NIC every WQE goes through an engine thread. Returns rank 0's output,
     * printed, once both sizes are in it and rank 1 stayed silent.
     */
    private static String pingPongOnGpu0(boolean namedHosts, String how, String... transport) throws Exception {
        List<String> args = new ArrayList<>(List.of("latency"));
        args.addAll(List.of(transport));
        args.addAll(List.of("--mode", "signal,put_signal", "--sizes", "8,64k", "--scopes", "thread", "--iters", "50",
                "--warmup", "5", "--gpus", "0,0"));
        String[] out = run(namedHosts, args.toArray(String[]::new));
        System.out.println("gda4j latency " + how + " across two " + (namedHosts ? "named hosts" : "processes")
                + " on GPU 0 (rank 0's output):\n" + out[0]);
        assertTrue(out[0].contains("put_signal") && out[0].contains("64 KiB"), out[0]);
        assertEquals("", out[1], "rank 1 answers silently");
        return out[0];
    }

    /**
     * Runs {@code gda4j args} as ranks 0 and 1 of a two-process launch; returns their stdout once both exit 0. With
     * {@code --csv}, rank 0's table comes back without the {@code #} lines of its run header, which must be there.
     */
    private static String[] acrossTwoProcesses(String... args) throws Exception {
        return withoutRunHeader(run(false, args), args);
    }

    /** As {@link #acrossTwoProcesses}, with each process its own host ({@code host-a}, {@code host-b}). */
    private static String[] acrossTwoHosts(String... args) throws Exception {
        return withoutRunHeader(run(true, args), args);
    }

    private static String[] withoutRunHeader(String[] out, String... args) {
        if (!List.of(args).contains("--csv")) {
            return out;
        }
        assertTrue(out[0].startsWith("# "), "a CSV starts with its run header's # lines: " + out[0]);
        String table = out[0].lines().filter(l -> !l.startsWith("#")).collect(Collectors.joining("\n", "", "\n"));
        return new String[] {table, out[1]};
    }

    /** Starts rank 0 and rank 1 of a two-process job of {@code gda4j args}; each its own named host if asked. */
    private static List<Process> start(boolean namedHosts, String... args) throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Process> ps = new ArrayList<>();
        try {
            for (int r = 0; r < 2; r++) {
                List<String> command = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED",
                        "-Xmx256m", "-cp", TestClassPath.get(), Main.class.getName()));
                command.addAll(List.of(args));
                ProcessBuilder pb = new ProcessBuilder(command);
                Map<String, String> env = pb.environment();
                for (String v : List.of("RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID")) {
                    env.remove(v);
                }
                env.put(LaunchEnvironment.GDA4J_RANK, Integer.toString(r));
                env.put(LaunchEnvironment.GDA4J_WORLD_SIZE, "2");
                env.put(LaunchEnvironment.GDA4J_ROOT, "127.0.0.1:" + port);
                env.put(LaunchEnvironment.GDA4J_JOB_TOKEN, "cli-test-" + port);
                env.remove(WorldConfig.GPUS_ENV);
                env.remove(WorldConfig.HOST_NAME_ENV);
                if (namedHosts) {
                    env.put(WorldConfig.HOST_NAME_ENV, "host-" + (char) ('a' + r));
                }
                ps.add(pb.start());
            }
        } catch (Exception e) {
            ps.forEach(Process::destroyForcibly);
            throw e;
        }
        return ps;
    }

    private static String[] run(boolean namedHosts, String... args) throws Exception {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
        List<Process> ps = start(namedHosts, args);
        try {
            Ended ended = await(ps);
            for (int r = 0; r < 2; r++) {
                assertTrue(ended.finished[r], "rank " + r + " finished within 200 s" + ended.both());
                assertEquals(0, ps.get(r).exitValue(), "rank " + r + " exit code" + ended.both());
            }
            return ended.out;
        } finally {
            for (Process p : ps) {
                p.destroyForcibly();
            }
        }
    }

    /** What two processes printed, and whether each ended within 200 s. */
    private record Ended(String[] out, String[] err, boolean[] finished) {
        String both() {
            StringBuilder b = new StringBuilder();
            for (int r = 0; r < 2; r++) {
                b.append("\nrank ").append(r).append(" stdout:\n").append(out[r]).append("\nrank ").append(r)
                        .append(" stderr:\n").append(err[r]);
            }
            return b.toString();
        }
    }

    /**
     * Drains both processes' streams from the start (a child whose pipe fills stalls, and the other waits for it at
     * the next barrier) and waits for them; one that does not end is killed.
     */
    private static Ended await(List<Process> ps) throws InterruptedException {
        StringBuilder[] o = new StringBuilder[2];
        StringBuilder[] e = new StringBuilder[2];
        List<Thread> drains = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            o[r] = new StringBuilder();
            e[r] = new StringBuilder();
            drains.add(drain(ps.get(r).getInputStream(), o[r]));
            drains.add(drain(ps.get(r).getErrorStream(), e[r]));
        }
        boolean[] finished = new boolean[2];
        for (int r = 0; r < 2; r++) {
            finished[r] = ps.get(r).waitFor(200, TimeUnit.SECONDS);
            if (!finished[r]) {
                break;
            }
        }
        for (Process p : ps) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        for (Thread t : drains) {
            t.join(5_000);
        }
        return new Ended(new String[] {o[0].toString(), o[1].toString()},
                new String[] {e[0].toString(), e[1].toString()}, finished);
    }

    private static Thread drain(java.io.InputStream in, StringBuilder into) {
        Thread t = new Thread(() -> {
            try {
                into.append(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException ignored) {
                // the process ended
            }
        });
        t.setDaemon(true);
        t.start();
        return t;
    }
}
