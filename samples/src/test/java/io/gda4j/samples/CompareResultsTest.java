package io.gda4j.samples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** compare's table, its CSV read back, and the chart drawn from it: all without a GPU. */
class CompareResultsTest {
    @TempDir
    Path dir;

    static CompareResults sample() {
        long[] sizes = {8, 4096, 1 << 20, 256L << 20};
        CompareResults r = new CompareResults(List.of("p2p", "proxy"), sizes);
        double[][] rtt = {{2.4, 3.1, 9.8, 1400}, {9.5, 10.2, 16.0, 1420}};
        double[][] bw = {{0.01, 3.0, 160, 368}, {0.003, 1.4, 210, 385}};
        double[] ce = {0.004, 2.0, 230, 397};
        for (int t = 0; t < 2; t++) {
            System.arraycopy(rtt[t], 0, r.rttMicros[t], 0, 4);
            System.arraycopy(bw[t], 0, r.gbps[t], 0, 4);
        }
        System.arraycopy(ce, 0, r.memcpyPeerGbps, 0, 4);
        return r;
    }

    @Test
    void theTablePutsTransportsSideBySideWithRatios() {
        ResultTable t = sample().table();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        t.print(new PrintStream(out, true, StandardCharsets.UTF_8), ResultTable.Format.CSV);
        String csv = out.toString(StandardCharsets.UTF_8);
        String header = csv.lines().findFirst().orElseThrow();
        assertEquals("size,bytes,p2p_rtt_us,proxy_rtt_us,proxy/p2p_rtt,p2p_GBps,proxy_GBps,proxy/p2p_GBps,"
                + "memcpyPeer_GBps,p2p/memcpyPeer,proxy/memcpyPeer,fastest_rtt,fastest_GBps", header);
        String last = csv.strip().lines().reduce((a, b) -> b).orElseThrow();
        assertEquals("256 MiB,268435456,1400.0,1420.0," + (1420.0 / 1400) + ",368.0,385.0," + (385.0 / 368) + ",397.0,"
                + (368.0 / 397) + "," + (385.0 / 397) + ",p2p,memcpyPeer", last, "every figure and ratio in full");
    }

    /** Per size, which path won: the shortest round trip, and the most GB/s with the copy engines in the running. */
    @Test
    void eachSizeNamesThePathThatWon() {
        CompareResults r = sample();
        assertEquals(List.of("p2p", "p2p", "p2p", "p2p"), List.of(r.fastestRtt(0), r.fastestRtt(1), r.fastestRtt(2),
                r.fastestRtt(3)));
        // 8 B and 4 KiB: p2p's stores; 1 MiB: the proxy's 210 GB/s lose to memcpyPeer's 230; 256 MiB: memcpyPeer.
        assertEquals(List.of("p2p", "p2p", "memcpyPeer", "memcpyPeer"), List.of(r.fastestGbps(0), r.fastestGbps(1),
                r.fastestGbps(2), r.fastestGbps(3)));
        CompareResults empty = new CompareResults(List.of("p2p"), new long[] {8});
        assertEquals("-", empty.fastestRtt(0));
        assertEquals("-", empty.fastestGbps(0));
    }

    @Test
    void theCsvReadsBackAndDrawsAPng() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        sample().table().print(new PrintStream(out, true, StandardCharsets.UTF_8), ResultTable.Format.CSV);
        Path csv = dir.resolve("compare.csv");
        Files.writeString(csv, out.toString(StandardCharsets.UTF_8));
        CompareResults back = CompareResults.readCsv(csv);
        assertEquals(List.of("p2p", "proxy"), back.transports);
        assertArrayEquals(new long[] {8, 4096, 1 << 20, 256L << 20}, back.sizes);
        assertEquals(9.5, back.rttMicros[1][0], 1e-9);
        assertEquals(397, back.memcpyPeerGbps[3], 1e-9);
        Path png = dir.resolve("compare.png");
        ComparePlot.write(back, png, null);
        byte[] bytes = Files.readAllBytes(png);
        assertTrue(bytes.length > 1000, "a PNG of " + bytes.length + " bytes");
        assertArrayEquals(new byte[] {(byte) 0x89, 'P', 'N', 'G'}, java.util.Arrays.copyOf(bytes, 4));
        MainTest.Run r = MainTest.run("compare", "--from", csv.toString(), "--plot", dir.resolve("again.png").toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("proxy/p2p_rtt"), r.out());
        assertTrue(Files.size(dir.resolve("again.png")) > 1000);
    }

    @Test
    void aForeignCsvIsRefusedWithAReason() throws Exception {
        Path csv = dir.resolve("other.csv");
        Files.writeString(csv, "a,b\n1,2\n");
        UsageException e = assertThrows(UsageException.class, () -> CompareResults.readCsv(csv));
        assertTrue(e.getMessage().contains("gda4j compare --csv"), e.getMessage());
    }

    @Test
    void latencyIterationsShrinkForLargeSizes() {
        assertEquals(1000, CompareCommand.latencyIterations(1000, 8));
        assertEquals(CompareCommand.MIN_LATENCY_ITERS, CompareCommand.latencyIterations(1000, 1L << 30));
        assertEquals(512, CompareCommand.latencyIterations(1000, 4L << 20));
    }
}
