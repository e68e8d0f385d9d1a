package io.gda4j.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gda4j.bootstrap.LaunchEnvironment;
import io.gda4j.cuda.Cuda;
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

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code gda4j latency} as two processes started the way a launcher starts them (one rank each, both on GPU 0): rank
 * 0's process prints the table, rank 1's prints nothing on stdout, both exit 0.
 */
@Tag("gpu")
@Timeout(240)
class LatencyProcessesGpuTest {
    @Test
    void twoProcessesPingPongAndRankZeroReports() throws Exception {
        assumeTrue(Cuda.status().available(), () -> "no CUDA device: " + Cuda.status().reason());
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Process> ps = new ArrayList<>();
        try {
            for (int r = 0; r < 2; r++) {
                ProcessBuilder pb = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-Xmx256m", "-cp",
                        System.getProperty("java.class.path"), Main.class.getName(), "latency", "--mode",
                        "signal,put_signal", "--sizes", "8,64k", "--scopes", "warp", "--iters", "200", "--warmup",
                        "20", "--gpus", "0,0", "--csv");
                Map<String, String> env = pb.environment();
                for (String v : List.of("RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID")) {
                    env.remove(v);
                }
                env.put(LaunchEnvironment.GDA4J_RANK, Integer.toString(r));
                env.put(LaunchEnvironment.GDA4J_WORLD_SIZE, "2");
                env.put(LaunchEnvironment.GDA4J_ROOT, "127.0.0.1:" + port);
                env.put(LaunchEnvironment.GDA4J_JOB_TOKEN, "latency-test-" + port);
                env.remove(WorldConfig.GPUS_ENV);
                ps.add(pb.start());
            }
            String[] out = new String[2];
            String[] err = new String[2];
            for (int r = 0; r < 2; r++) {
                Process p = ps.get(r);
                // Drain both streams on threads: a full pipe would stall the child.
                StringBuilder o = new StringBuilder();
                StringBuilder e = new StringBuilder();
                Thread to = drain(p.getInputStream(), o);
                Thread te = drain(p.getErrorStream(), e);
                assertTrue(p.waitFor(200, TimeUnit.SECONDS), "rank " + r + " finished");
                to.join(5_000);
                te.join(5_000);
                out[r] = o.toString();
                err[r] = e.toString();
                assertEquals(0, p.exitValue(), "rank " + r + " exit code; stdout:\n" + out[r] + "\nstderr:\n" + err[r]);
            }
            System.out.println("gda4j latency across two processes on GPU 0 (rank 0's output):\n" + out[0]);
            assertTrue(out[0].startsWith("mode,scope,size,bytes,iters,min_us,median_us,p99_us,max_us"), out[0]);
            assertEquals(4, out[0].strip().split("\n").length,
                    "a header and three rows (signal; put_signal 8 B and 64 KiB): " + out[0]);
            assertTrue(out[0].contains("signal,thread") && out[0].contains("put_signal,warp,64 KiB"), out[0]);
            assertEquals("", out[1], "rank 1 answers silently");
        } finally {
            for (Process p : ps) {
                p.destroyForcibly();
            }
        }
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
