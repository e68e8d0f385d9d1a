package io.gda4j.samples;

import org.apache.commons.csv.CSVFormat;
import org.apache.commons.csv.CSVPrinter;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Rows of results printed as an aligned table (people), CSV or JSON (machines), under the {@link RunHeader} of the
 * run. Cells are strings or numbers. The table rounds numbers for reading; CSV and JSON write each double in full
 * (the shortest decimal that reads back as the same double), so ratios recomputed from a file are the ratios the run
 * printed. A number that is not finite (not measured) is "-" in the table, an empty cell in CSV and {@code null} in
 * JSON. Text cells are escaped for the terminal, and in CSV neutralised where a spreadsheet would run them.
 */
final class ResultTable {
    enum Format { TABLE, CSV, JSON }

    /** The CSV dialect written and read back ({@code compare --from}): RFC 4180 quoting, {@code #} comment lines. */
    static final CSVFormat CSV_FORMAT = CSVFormat.DEFAULT.builder().setCommentMarker('#')
            .setRecordSeparator(System.lineSeparator()).build();

    private final String title;
    private final List<String> columns;
    private final List<List<Object>> rows = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private RunHeader header = new RunHeader();

    ResultTable(String title, List<String> columns) {
        this.title = title;
        this.columns = List.copyOf(columns);
    }

    void add(Object... cells) {
        if (cells.length != columns.size()) {
            throw new IllegalArgumentException("row has " + cells.length + " cells for " + columns.size() + " columns");
        }
        rows.add(java.util.Collections.unmodifiableList(java.util.Arrays.asList(cells.clone())));
    }

    /** A line printed under the table (table format), a {@code note_N} header line (CSV) or a "notes" entry (JSON). */
    void note(String line) {
        notes.add(line);
    }

    /** What the run was measured on and with, printed above the table, as the CSV's comment lines, in JSON. */
    void header(RunHeader h) {
        this.header = h;
    }

    RunHeader header() {
        return header;
    }

    List<String> columns() {
        return columns;
    }

    List<List<Object>> rows() {
        return rows;
    }

    List<String> notes() {
        return notes;
    }

    String title() {
        return title;
    }

    void print(PrintStream out, Format format) {
        switch (format) {
            case CSV -> out.print(csv());
            case JSON -> out.println(json());
            default -> table(out);
        }
    }

    /** The CSV text: the run header and notes as {@code # key: value} lines, the column line, the rows. */
    String csv() {
        StringBuilder b = new StringBuilder();
        try (CSVPrinter p = new CSVPrinter(b, CSV_FORMAT)) {
            for (var e : csvHeader().entries().entrySet()) {
                p.printComment(CellText.forSpreadsheetLine(e.getKey() + ": " + e.getValue()));
            }
            List<String> head = new ArrayList<>();
            for (String c : columns) {
                head.add(CellText.forSpreadsheet(c));
            }
            p.printRecord(head);
            for (List<Object> r : rows) {
                List<String> cells = new ArrayList<>();
                for (Object c : r) {
                    cells.add(c instanceof Number n ? exact(n) : CellText.forSpreadsheet(String.valueOf(c)));
                }
                p.printRecord(cells);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringBuilder does not fail
        }
        return b.toString();
    }

    /** The run header with the notes added as note_1, note_2, ...: CSV has no other place for them. */
    private RunHeader csvHeader() {
        if (notes.isEmpty()) {
            return header;
        }
        RunHeader h = new RunHeader();
        header.entries().forEach(h::put);
        for (int i = 0; i < notes.size(); i++) {
            h.put("note_" + (i + 1), notes.get(i));
        }
        return h;
    }

    private void table(PrintStream out) {
        out.print(header.commentLines());
        int[] width = new int[columns.size()];
        for (int i = 0; i < width.length; i++) {
            width[i] = columns.get(i).length();
            for (List<Object> r : rows) {
                width[i] = Math.max(width[i], text(r.get(i)).length());
            }
        }
        out.println(CellText.forTerminal(title));
        StringBuilder head = new StringBuilder();
        StringBuilder rule = new StringBuilder();
        for (int i = 0; i < width.length; i++) {
            head.append(i == 0 ? "" : "  ").append(pad(CellText.forTerminal(columns.get(i)), width[i], i > 0));
            rule.append(i == 0 ? "" : "  ").append("-".repeat(width[i]));
        }
        out.println(head);
        out.println(rule);
        for (List<Object> r : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < width.length; i++) {
                Object c = r.get(i);
                line.append(i == 0 ? "" : "  ").append(pad(text(c), width[i], c instanceof Number));
            }
            out.println(line);
        }
        for (String n : notes) {
            out.println(CellText.forTerminal(n));
        }
        out.println();
    }

    String json() {
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("metadata", header.entries());
        o.put("title", title);
        List<Object> list = new ArrayList<>();
        for (List<Object> r : rows) {
            Map<String, Object> row = new LinkedHashMap<>();
            for (int i = 0; i < columns.size(); i++) {
                row.put(columns.get(i), r.get(i));
            }
            list.add(row);
        }
        o.put("rows", list);
        o.put("notes", notes);
        return Json.of(o);
    }

    /**
     * A number in full: integers as they are, a double as the shortest plain decimal that parses back to the same
     * double ({@link Double#toString} without its exponent), empty where it is not finite.
     */
    static String exact(Number n) {
        if (n instanceof Double || n instanceof Float) {
            double d = n.doubleValue();
            return Double.isFinite(d) ? BigDecimal.valueOf(d).toPlainString() : "";
        }
        return String.valueOf(n);
    }

    /** A cell as the table shows it: numbers rounded for reading, text escaped for the terminal. */
    static String text(Object c) {
        if (c instanceof Double || c instanceof Float) {
            double d = ((Number) c).doubleValue();
            if (!Double.isFinite(d)) {
                return "-";
            }
            double a = Math.abs(d);
            return a >= 100 ? String.format(Locale.ROOT, "%.1f", d) : a >= 0.1 || a == 0
                    ? String.format(Locale.ROOT, "%.3f", d) : String.format(Locale.ROOT, "%.3g", d);
        }
        return CellText.forTerminal(String.valueOf(c));
    }

    private static String pad(String s, int w, boolean right) {
        String fill = " ".repeat(Math.max(0, w - s.length()));
        return right ? fill + s : s + fill;
    }
}
