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
    void csvQuotesWhatNeedsIt() {
        String s = print(sample(), ResultTable.Format.CSV);
        assertEquals("mode,bytes,median_us", s.lines().findFirst().orElseThrow());
        assertTrue(s.contains("\"put_signal, \"\"x\"\"\",1048576,214.7"), s);
    }

    @Test
    void jsonKeepsNumbersAsNumbers() {
        String s = print(sample(), ResultTable.Format.JSON).strip();
        assertTrue(s.startsWith("{\"title\":\"latency\",\"rows\":[{\"mode\":\"signal\",\"bytes\":0,\"median_us\":1.500}"), s);
        assertTrue(s.contains("\"mode\":\"put_signal, \\\"x\\\"\""), s);
        assertTrue(s.endsWith("\"notes\":[\"rank 0 -> rank 1\"]}"), s);
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
