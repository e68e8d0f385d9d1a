package io.gda4j.samples;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code compare --from} against what a file can hold: its own CSV read back to the last digit, run header included,
 * and every hostile CSV refused with one line (exit 2) that is safe to show on a terminal.
 */
@Timeout(30)
class CompareFromTest {
    @TempDir
    Path dir;

    /** Figures whose ratios have every digit a double has, and a run header with commas, quotes and a note. */
    static CompareResults awkward() {
        CompareResults r = new CompareResults(List.of("p2p", "proxy", "ibgda-emulated"), new long[] {1, 8, 1536,
            1L << 20});
        double[][] rtt = {{2.4000000000000004, 3.1, 1.0 / 3, 9.8}, {9.5, 10.2, 16.0, Double.NaN},
            {0.1 + 0.2, 7.0 / 3, 11, 20.000000000000004}};
        double[][] bw = {{1e-4, 0.003, 160.17, 368.9}, {0.00012345678901234, 1.4, 210, 385},
            {Double.NaN, 0.7, 2.0 / 3, 3.3}};
        double[] ce = {4e-5, 2.0, 230.123456789, 397.0000001};
        for (int t = 0; t < 3; t++) {
            System.arraycopy(rtt[t], 0, r.rttMicros[t], 0, 4);
            System.arraycopy(bw[t], 0, r.gbps[t], 0, 4);
        }
        System.arraycopy(ce, 0, r.memcpyPeerGbps, 0, 4);
        r.header = RunHeader.of("compare").put("gpus", "rank 0: GPU 0 NVIDIA H200, \"SXM\"; rank 1: GPU 1")
                .put("pair_p2p", "rank 0 (GPU 0, NVIDIA H200) -> rank 1 (GPU 1, NVIDIA H200) over p2p")
                .put("scope", "block").put("run", "latency: put_signal block scope; bandwidth: median of 3");
        r.notes.add("p2p: rank 0 -> rank 1, \"quoted\", with commas");
        return r;
    }

    private Path write(String name, String text) throws Exception {
        Path p = dir.resolve(name);
        Files.writeString(p, text, StandardCharsets.UTF_8);
        return p;
    }

    /** The CSV compare --csv prints, the exact code path of the command (its table, its CSV writer). */
    private Path csvOf(CompareResults r) throws Exception {
        return write("compare.csv", r.table().csv());
    }

    @Test
    void aReReadReproducesEveryFigureRatioAndWinnerToTheLastDigit() throws Exception {
        CompareResults run = awkward();
        ResultTable printed = run.table();
        CompareResults back = CompareResults.readCsv(csvOf(run));
        ResultTable again = back.table();
        assertEquals(printed.columns(), again.columns());
        for (int i = 0; i < printed.rows().size(); i++) {
            List<Object> a = printed.rows().get(i);
            List<Object> b = again.rows().get(i);
            for (int c = 0; c < a.size(); c++) {
                Object x = a.get(c);
                Object y = b.get(c);
                if (x instanceof Double dx) {
                    assertEquals(Double.doubleToLongBits(dx), Double.doubleToLongBits((Double) y),
                            printed.columns().get(c) + " of row " + i + ": " + x + " came back as " + y);
                } else {
                    assertEquals(x, y, printed.columns().get(c) + " of row " + i);
                }
            }
        }
        assertEquals(printed.csv(), again.csv(), "the file --from writes again is the file it read");
        assertEquals(run.header.entries(), back.header.entries(), "the run header comes back");
        assertEquals(run.notes, back.notes);
    }

    @Test
    void fromPrintsTheRunHeaderInEveryFormat() throws Exception {
        Path csv = csvOf(awkward());
        CliRun table = CliRun.of("compare", "--from", csv.toString());
        assertEquals(0, table.code(), table::toString);
        assertTrue(table.out().startsWith("# gda4j: " + Main.version() + System.lineSeparator() + "# command: compare"),
                table.out());
        assertTrue(table.out().contains("# gpus: rank 0: GPU 0 NVIDIA H200, \"SXM\"; rank 1: GPU 1"), table.out());
        CliRun json = CliRun.of("compare", "--from", csv.toString(), "--json");
        assertEquals(0, json.code(), json::toString);
        JsonSyntax.check(json.out().strip());
        assertTrue(json.out().startsWith("{\"metadata\":{\"gda4j\":\"" + Main.version() + "\",\"command\":\"compare\""),
                json.out());
        assertTrue(json.out().contains("\"scope\":\"block\""), json.out());
        CliRun again = CliRun.of("compare", "--from", csv.toString(), "--csv");
        assertEquals(Files.readString(csv), again.out(), "--from --csv prints the file it read");
    }

    /** Each hostile file, its refusal's words; every one is one line, exit 2, no exception, no raw control char. */
    @Test
    void hostileCsvsAreRefusedWithOneSafeLine() throws Exception {
        String good = awkward().table().csv();
        List<String> lines = good.lines().toList();
        int head = 0;
        while (lines.get(head).startsWith("#")) {
            head++;
        }
        String header = lines.get(head);
        String row1 = lines.get(head + 1);
        String row2 = lines.get(head + 2);
        String comments = String.join("\n", lines.subList(0, head)) + "\n";
        List<String> cols = List.of(header.split(","));
        int p2pRtt = cols.indexOf("p2p_rtt_us");
        int bytes = cols.indexOf("bytes");
        String[][] cases = {
            {"negative.csv", comments + header + "\n" + cell(row1, p2pRtt, "-2.4") + "\n", "p2p_rtt_us '-2.4' is not a"
                + " measurement"},
            {"zero.csv", header + "\n" + cell(row1, p2pRtt, "0") + "\n", "p2p_rtt_us '0' is not a measurement"},
            {"infinite.csv", header + "\n" + cell(row1, p2pRtt, "Infinity") + "\n", "'Infinity' is not a measurement"},
            {"overflow.csv", header + "\n" + cell(row1, p2pRtt, "1e999") + "\n", "'1e999' is not a measurement"},
            {"hex.csv", header + "\n" + cell(row1, p2pRtt, "0x1p3") + "\n", "'0x1p3' is not a measurement"},
            {"suffix.csv", header + "\n" + cell(row1, p2pRtt, "2.5d") + "\n", "'2.5d' is not a measurement"},
            {"nan.csv", header + "\n" + cell(row1, p2pRtt, "NaN") + "\n", "'NaN' is not a measurement"},
            {"duplicate.csv", header + "\n" + row1 + "\n" + row1 + "\n", "size 1 appears twice"},
            {"unsorted.csv", header + "\n" + row2 + "\n" + row1 + "\n", "size 1 comes after 8"},
            {"mislabelled.csv", header + "\n" + cell(row1, cols.indexOf("size"), "=HYPERLINK(\"http://x\",\"y\")")
                + "\n", "size '=HYPERLINK(\"http://x\",\"y\")' is not bytes 1"},
            {"edited.csv", header + "\n" + cell(row1, cols.indexOf("proxy/p2p_rtt"), "1.5") + "\n", "proxy/p2p_rtt is"
                + " '1.5' but the figures of that line give"},
            {"winner.csv", header + "\n" + cell(row1, cols.indexOf("fastest_rtt"), "proxy") + "\n", "fastest_rtt is"
                + " 'proxy'"},
            {"bytes.csv", header + "\n" + cell(row1, bytes, "1.0") + "\n", "bytes must be a whole number from 1, got"
                + " '1.0'"},
            {"short.csv", header + "\n" + row1.substring(0, row1.lastIndexOf(',')) + "\n", "cells for"},
            {"copyengine.csv", header.replace("proxy", "cuMemcpyPeerAsync") + "\n" + row1 + "\n",
                "'cuMemcpyPeerAsync' is not a transport name"},
            {"reserved.csv", header.replace("proxy", "memcpypeer") + "\n" + row1 + "\n", "'memcpypeer' is not a"
                + " transport name"},
            {"empty-name.csv", header.replace("proxy_rtt_us", "_rtt_us") + "\n" + row1 + "\n", "'' is not a"
                + " transport name"},
            {"escape.csv", header.replace("proxy", "\u001b[31mproxy") + "\n" + row1 + "\n", "'\\u001b[31mproxy' is"
                + " not a transport name"},
            {"extra.csv", header + ",evil\n" + row1 + ",=1+1\n", "column 'evil' is not one compare writes"},
            {"comment.csv", "# hello world\n" + header + "\n" + row1 + "\n", "'# hello world' is not a 'key: value'"},
            {"comment-twice.csv", "# gda4j: 1\n# gda4j: 2\n" + header + "\n" + row1 + "\n", "gives 'gda4j' twice"},
            {"quote.csv", header + "\n\"" + row1 + "\n", "is not a CSV 'gda4j compare --csv' wrote"},
            {"header-only.csv", comments + header + "\n", "holds no compare results, only a column line"},
        };
        for (String[] c : cases) {
            Path file = write(c[0], c[1]);
            CliRun r = CliRun.of("compare", "--from", file.toString());
            assertEquals(2, r.code(), () -> c[0] + " -> " + r);
            assertEquals(1, r.err().strip().lines().count(), () -> c[0] + " -> " + r);
            assertTrue(r.err().contains(c[2]), () -> c[0] + ": wanted '" + c[2] + "' in " + r.err());
            assertFalse(r.err().contains("Exception"), () -> c[0] + " -> " + r);
            assertEquals("", r.out(), c[0]);
            for (char ch : r.err().strip().toCharArray()) {
                assertFalse(CellText.isUnsafe(ch), () -> c[0] + ": a control character reached stderr: " + r.err());
            }
        }
    }

    /** Control characters and formulas in a header the reader accepts stay harmless when printed again. */
    @Test
    void anAcceptedHeaderIsPrintedSafely() throws Exception {
        CompareResults r = awkward();
        r.header.put("gpus", "\u001b]0;pwned\u0007 GPU 0, =HYPERLINK(\"http://x\",\"y\"), +1");
        Path csv = csvOf(r);
        for (String f : new String[] {"--csv", "--json"}) {
            CliRun run = CliRun.of("compare", "--from", csv.toString(), f);
            assertEquals(0, run.code(), run::toString);
            for (char ch : run.out().toCharArray()) {
                assertTrue(!CellText.isUnsafe(ch) || ch == '\n', f + " printed a control character: " + run.out());
            }
        }
        CliRun table = CliRun.of("compare", "--from", csv.toString());
        assertTrue(table.out().contains("\\u001b]0;pwned\\u0007"), table.out());
        String csvAgain = CliRun.of("compare", "--from", csv.toString(), "--csv").out();
        assertTrue(csvAgain.contains(", '=HYPERLINK(") && csvAgain.contains(", '+1"), "a spreadsheet splits comment"
                + " lines at commas too: " + csvAgain);
    }

    @Test
    void aDeviceIsRefusedAtOnceWithoutReadingIt() {
        assumeTrue(Files.exists(Path.of("/dev/zero")), "no /dev/zero here");
        long start = System.nanoTime();
        CliRun r = CliRun.of("compare", "--from", "/dev/zero");
        assertEquals(2, r.code(), r::toString);
        assertTrue(r.err().contains("is not a regular file"), r.err());
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(2), "took too long: it read the device");
    }

    @Test
    @Timeout(10)
    void aFifoWithoutAWriterIsRefusedWithoutWaiting() throws Exception {
        Path fifo = dir.resolve("pipe.csv");
        Process mk;
        try {
            mk = new ProcessBuilder("mkfifo", fifo.toString()).redirectErrorStream(true).start();
        } catch (java.io.IOException e) {
            org.junit.jupiter.api.Assumptions.abort("no mkfifo here: " + e.getMessage());
            return;
        }
        assumeTrue(mk.waitFor(5, TimeUnit.SECONDS) && mk.exitValue() == 0, "mkfifo failed");
        CliRun r = CliRun.of("compare", "--from", fifo.toString());
        assertEquals(2, r.code(), r::toString);
        assertTrue(r.err().contains("is not a regular file (a pipe, a device or a socket)"), r.err());
        CliRun plot = CliRun.of("compare", "--from", csvOf(awkward()).toString(), "--plot", dir.resolve("x.png")
                .toString());
        assertEquals(0, plot.code(), plot::toString);
        Path fifoPng = dir.resolve("pipe.png");
        new ProcessBuilder("mkfifo", fifoPng.toString()).start().waitFor(5, TimeUnit.SECONDS);
        CliRun toFifo = CliRun.of("compare", "--from", csvOf(awkward()).toString(), "--plot", fifoPng.toString());
        assertEquals(2, toFifo.code(), toFifo::toString);
        assertTrue(toFifo.err().contains("exists and is not a regular file"), toFifo.err());
    }

    @Test
    void aFileLargerThanTheCapIsRefusedWithoutReadingItWhole() throws Exception {
        Path big = dir.resolve("big.csv");
        try (var out = Files.newOutputStream(big)) {
            byte[] line = "1,2,3,4,5,6,7,8\n".getBytes(StandardCharsets.US_ASCII);
            for (long n = 0; n <= CompareResults.MAX_FILE_BYTES / line.length + 1; n++) {
                out.write(line);
            }
        }
        CliRun r = CliRun.of("compare", "--from", big.toString());
        assertEquals(2, r.code(), r::toString);
        assertTrue(r.err().contains("is larger than 1 MiB"), r.err());
    }

    @Test
    void fromChecksExpectationsAgainstTheFilesFigures() throws Exception {
        Path csv = csvOf(awkward());
        CliRun pass = CliRun.of("compare", "--from", csv.toString(), "--expect", "p2p_rtt_us<=10");
        assertEquals(0, pass.code(), pass::toString);
        assertTrue(pass.out().strip().endsWith("expect: PASS p2p_rtt_us <= 10 (4 rows)"), pass.out());
        CliRun fail = CliRun.of("compare", "--from", csv.toString(), "--expect", "proxy/p2p_rtt<=3,p2p_GBps>=0.001");
        assertEquals(Expectations.EXIT_MISSED, fail.code(), fail::toString);
        String verdict = fail.out().strip().lines().reduce((a, b) -> b).orElseThrow();
        assertTrue(verdict.startsWith("expect: FAIL proxy/p2p_rtt <= 3: 3 of 3 rows miss it, the worst"), verdict);
        assertTrue(verdict.contains("p2p_GBps >= 0.001: 1 of 4 rows miss it, the worst 0.0001 at 1 B"), verdict);
        CliRun json = CliRun.of("compare", "--from", csv.toString(), "--json", "--expect", "p2p_rtt_us<=1");
        assertEquals(Expectations.EXIT_MISSED, json.code(), json::toString);
        JsonSyntax.check(json.out().strip());
        assertTrue(json.out().contains("\"expect\":\"expect: FAIL p2p_rtt_us <= 1"), json.out());
        assertTrue(json.err().startsWith("expect: FAIL"), "the verdict line on stderr beside JSON: " + json.err());
        CliRun bad = CliRun.of("compare", "--from", csv.toString(), "--expect", "p2p_rtt<=1");
        assertEquals(2, bad.code(), bad::toString);
        assertTrue(bad.err().contains("no column 'p2p_rtt'"), bad.err());
    }

    private static String cell(String row, int column, String value) {
        String[] cells = row.split(",", -1);
        cells[column] = value.contains(",") || value.contains("\"") ? '"' + value.replace("\"", "\"\"") + '"' : value;
        return String.join(",", cells);
    }
}
