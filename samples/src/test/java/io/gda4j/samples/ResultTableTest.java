package io.gda4j.samples;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ResultTableTest {
    static String print(ResultTable t, ResultTable.Format f) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        t.print(new PrintStream(b, true, StandardCharsets.UTF_8), f);
        return b.toString(StandardCharsets.UTF_8);
    }

    static ResultTable sample() {
        ResultTable t = new ResultTable("latency", List.of("mode", "bytes", "median_us"));
        t.add("signal", 0L, 1.5);
        t.add("put_signal, \"x\"", 1048576L, 214.7);
        t.note("rank 0 -> rank 1");
        return t;
    }

    @Test
    void tableIsAlignedWithNumbersToTheRight() {
        String s = print(sample(), ResultTable.Format.TABLE);
        List<String> lines = s.lines().toList();
        assertEquals("latency", lines.get(0));
        assertTrue(lines.get(1).startsWith("mode"), s);
        assertEquals(lines.get(1).length(), lines.get(2).length(), s);
        assertTrue(lines.get(3).endsWith("1.500"), s);
        assertTrue(lines.get(4).endsWith("214.7"), s);
        assertTrue(s.contains("rank 0 -> rank 1"), s);
    }

    @Test
    void csvQuotesWhatNeedsItAndKeepsTheNotesAsHeaderLines() {
        String s = print(sample(), ResultTable.Format.CSV);
        List<String> lines = s.lines().toList();
        assertEquals("# note_1: rank 0 -> rank 1", lines.get(0));
        assertEquals("mode,bytes,median_us", lines.get(1));
        assertTrue(s.contains("\"put_signal, \"\"x\"\"\",1048576,214.7"), s);
    }

    @Test
    void jsonKeepsNumbersAsNumbers() {
        String s = print(sample(), ResultTable.Format.JSON).strip();
        assertTrue(s.startsWith("{\"metadata\":{},\"title\":\"latency\",\"rows\":[{\"mode\":\"signal\",\"bytes\":0,"
                + "\"median_us\":1.5}"), s);
        assertTrue(s.contains("\"mode\":\"put_signal, \\\"x\\\"\""), s);
        assertTrue(s.endsWith("\"notes\":[\"rank 0 -> rank 1\"]}"), s);
    }

    /** CSV and JSON keep every digit a double has: a small bandwidth is not 0.000, a ratio reads back exactly. */
    @Test
    void csvAndJsonWriteEachDoubleInFull() {
        ResultTable t = new ResultTable("bandwidth", List.of("bytes", "GBps", "ratio"));
        double ratio = 0.003 / 0.0071;
        t.add(8L, 0.0001234, ratio);
        String csv = print(t, ResultTable.Format.CSV);
        String row = csv.lines().toList().get(1);
        assertEquals("8,0.0001234," + ResultTable.exact(ratio), row);
        assertEquals(ratio, Double.parseDouble(row.split(",")[2]), 0.0, "the ratio reads back as the same double");
        assertTrue(print(t, ResultTable.Format.JSON).contains("\"GBps\":0.0001234,"), csv);
        assertTrue(print(t, ResultTable.Format.TABLE).contains("0.000123"), "the table rounds, to 3 digits");
    }

    /** Text from elsewhere (a CSV read back, a device name) can neither drive the terminal nor run in a spreadsheet. */
    @Test
    void controlCharactersAreEscapedAndFormulasNeutralised() {
        ResultTable t = new ResultTable("t\u001b]0;title\u0007", List.of("name", "bytes"));
        t.add("\u001b[2J=HYPERLINK(\"http://x\",\"y\")", 8L);
        t.add("=1+1", 16L);
        t.add("-", 24L);
        t.note("note \u009b31m\u202e");
        t.header(new RunHeader().put("gpus", "\u001b[31mred"));
        for (ResultTable.Format f : ResultTable.Format.values()) {
            String s = print(t, f);
            for (char c : s.toCharArray()) {
                assertTrue(!CellText.isUnsafe(c) || c == '\n' || c == '\r', f + " printed char " + (int) c + ": " + s);
            }
        }
        String csv = print(t, ResultTable.Format.CSV);
        assertTrue(csv.contains("\n'=1+1,16"), csv);
        assertTrue(csv.contains("\n-,24"), "a lone dash is no formula: " + csv);
        assertTrue(csv.contains("# gpus: \\u001b[31mred"), csv);
        assertTrue(csv.contains("\\u001b[2J=HYPERLINK"), csv);
        assertEquals("'=cmd", CellText.forSpreadsheet("=cmd"));
        assertEquals("'+1", CellText.forSpreadsheet("+1"));
        assertEquals("'@SUM(A1)", CellText.forSpreadsheet("@SUM(A1)"));
        assertEquals("'-2+3", CellText.forSpreadsheet("-2+3"));
    }

    @Test
    void aNumberNotMeasuredIsADashInTheTableAndEmptyInCsv() {
        ResultTable t = new ResultTable("x", List.of("bytes", "GBps"));
        t.add(8L, Double.NaN);
        assertTrue(print(t, ResultTable.Format.TABLE).lines().anyMatch(l -> l.matches("\\s*8\\s+-")));
        assertEquals("8,", print(t, ResultTable.Format.CSV).lines().toList().get(1));
    }

    @Test
    void jsonWritesANumberNotMeasuredAsNullNotAString() {
        ResultTable t = new ResultTable("bandwidth", List.of("bytes", "GBps", "peak", "note"));
        t.add(8L, Double.NaN, Double.POSITIVE_INFINITY, "n/a");
        String s = print(t, ResultTable.Format.JSON).strip();
        assertTrue(s.contains("{\"bytes\":8,\"GBps\":null,\"peak\":null,\"note\":\"n/a\"}"), s);
        assertTrue(!s.contains("NaN") && !s.contains("Infinity"), s);
    }
}
