package io.gda4j.samples;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What latency and bandwidth report, without a GPU: the statistics, the one-way column, the run header in every
 * format, and the --expect verdict.
 */
class BenchmarkOutputTest {
    @TempDir
    Path dir;

    @Test
    void latencyStatisticsAreHdrHistogramsIncludingMeanStdevAndP999() {
        int[] nanos = new int[10_000];
        for (int i = 0; i < nanos.length; i++) {
            nanos[i] = 2000 + (i % 100) * 10 + (i == 9_999 ? 1_000_000 : 0);
        }
        LatencyStats s = LatencyStats.of(nanos, nanos.length);
        Histogram h = new Histogram(60_000_000_000L, 3);
        for (int n : nanos) {
            h.recordValue(n);
        }
        assertEquals(h.getMinValue(), s.minNanos());
        assertEquals(h.getValueAtPercentile(50), s.medianNanos());
        assertEquals(h.getMean(), s.meanNanos(), 0.0);
        assertEquals(h.getStdDeviation(), s.stdevNanos(), 0.0);
        assertEquals(h.getValueAtPercentile(99), s.p99Nanos());
        assertEquals(h.getValueAtPercentile(99.9), s.p999Nanos());
        assertEquals(h.getMaxValue(), s.maxNanos());
        assertTrue(s.stdevNanos() > 9_000, "the one slow round trip shows in the deviation: " + s.stdevNanos());
        assertEquals(List.of("min_us", "median_us", "mean_us", "stdev_us", "p99_us", "p99.9_us", "max_us"),
                LatencyStats.COLUMNS);
        Object[] micros = s.micros();
        assertEquals(LatencyStats.COLUMNS.size(), micros.length);
        assertEquals(s.p999Nanos() / 1e3, (Double) micros[5], 0.0);
        assertEquals(List.of("min_us", "median_us", "mean_us", "stdev_us", "p99_us", "p99.9_us", "max_us",
                "half_rtt_us"), LatencyCommand.FIGURES, "the one-way column is named as half the round trip");
        assertTrue(BandwidthCommand.FIGURES.containsAll(List.of("put_Mmsg_s", "bidir_GBps")));
    }

    @Test
    void theHelpSaysWhatTheNewColumnsAre() {
        String latency = MainTest.run("latency", "--help").out().replaceAll("\\s+", " ");
        assertTrue(latency.contains("half_rtt_us, half the median: the one-way figure perftest prints"), latency);
        assertTrue(latency.contains("--no-check") && latency.contains("--expect"), latency);
        String bandwidth = MainTest.run("bandwidth", "--help").out().replaceAll("\\s+", " ");
        assertTrue(bandwidth.contains("put_Mmsg_s is the message rate") && bandwidth.contains("--bidir"), bandwidth);
    }

    /** The run header opens the table, is the CSV's comment lines and the JSON's metadata object. */
    @Test
    void theRunHeaderIsInEveryFormat() {
        ResultTable t = new ResultTable("latency", List.of("mode", "median_us"));
        t.add("signal", 2.5);
        t.header(RunHeader.of("latency").put("gpus", "rank 0: GPU 0 NVIDIA H200").put("iterations", 10000)
                .put("warmup", 1000).put("scopes", "thread").put("check", "on"));
        String table = ResultTableTest.print(t, ResultTable.Format.TABLE);
        assertTrue(table.startsWith("# gda4j: " + Main.version()), table);
        assertTrue(table.contains("# gpus: rank 0: GPU 0 NVIDIA H200") && table.contains("# iterations: 10000"), table);
        String csv = ResultTableTest.print(t, ResultTable.Format.CSV);
        assertTrue(csv.contains("# command: latency") && csv.contains("# date: "), csv);
        String json = ResultTableTest.print(t, ResultTable.Format.JSON);
        JsonSyntax.check(json.strip());
        assertTrue(json.startsWith("{\"metadata\":{\"gda4j\":\"" + Main.version() + "\",\"command\":\"latency\",\"date\":"),
                json);
        assertTrue(json.contains("\"warmup\":\"1000\",\"scopes\":\"thread\",\"check\":\"on\"}"), json);
    }

    @Test
    void theNvidiaDriverIsReadFromTheKernelModulesVersionLine() throws Exception {
        Path v = dir.resolve("version");
        Files.writeString(v, "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 07:09:29 UTC 2025\n"
                + "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n");
        assertEquals("NVIDIA 580.65.06", RunHeader.nvidiaDriver(v));
        Files.writeString(v, "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  575.57.08  Release Build\n");
        assertEquals("NVIDIA 575.57.08", RunHeader.nvidiaDriver(v));
        assertEquals("unknown", RunHeader.nvidiaDriver(dir.resolve("missing")));
    }

    @Test
    void expectationsGiveOneVerdictLineAndTheExitCode() {
        ResultTable t = new ResultTable("latency", List.of("mode", "size", "median_us", "p99_us"));
        t.add("put_signal", "8 B", 2.5, 3.0);
        t.add("put_signal", "1 MiB", 9.0, Double.NaN);
        Expectations pass = Expectations.parse("median_us<=10,p99_us<=3", List.of("median_us", "p99_us"));
        Expectations.Verdict v = pass.verdict(t, row -> row.get(0) + " " + row.get(1));
        assertEquals("expect: PASS median_us <= 10 (2 rows); p99_us <= 3 (1 row)", v.line());
        assertEquals(0, v.exitCode());
        Expectations.Verdict f = Expectations.parse("median_us<=5,p99_us>=4", List.of("median_us", "p99_us"))
                .verdict(t, row -> row.get(0) + " " + row.get(1));
        assertEquals("expect: FAIL median_us <= 5: 1 of 2 rows miss it, the worst 9 at put_signal 1 MiB; p99_us >= 4:"
                + " 1 of 1 rows miss it, the worst 3 at put_signal 8 B", f.line());
        assertEquals(Expectations.EXIT_MISSED, f.exitCode());
        Expectations.Verdict none = Expectations.parse("p99_us<=5", List.of("p99_us")).verdict(
                new ResultTable("x", List.of("p99_us")), row -> "");
        assertEquals("expect: FAIL p99_us <= 5: no row measured it", none.line(), "a threshold that checks nothing"
                + " does not pass");
        String printed = ResultTableTest.print(t, ResultTable.Format.TABLE);
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        int code = Expectations.report(t, ResultTable.Format.TABLE, pass, row -> "", new java.io.PrintStream(out, true,
                java.nio.charset.StandardCharsets.UTF_8), new java.io.PrintStream(err));
        assertEquals(0, code);
        assertEquals(printed + "expect: PASS median_us <= 10 (2 rows); p99_us <= 3 (1 row)" + System.lineSeparator(),
                out.toString(java.nio.charset.StandardCharsets.UTF_8), "the verdict line follows the table");
    }
}
