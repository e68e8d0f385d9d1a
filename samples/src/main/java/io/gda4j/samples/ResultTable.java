package io.gda4j.samples;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Rows of results printed as an aligned table (people), CSV or JSON (machines). Cells are strings or numbers;
 * numbers stay numbers in JSON.
 */
final class ResultTable {
    enum Format { TABLE, CSV, JSON }

    private final String title;
    private final List<String> columns;
    private final List<List<Object>> rows = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();

    ResultTable(String title, List<String> columns) {
        this.title = title;
        this.columns = List.copyOf(columns);
    }

    void add(Object... cells) {
        if (cells.length != columns.size()) {
            throw new IllegalArgumentException("row has " + cells.length + " cells for " + columns.size() + " columns");
        }
        rows.add(List.of(cells));
    }

    /** A line printed under the table (table format) or as a "notes" array (JSON); CSV leaves them out. */
    void note(String line) {
        notes.add(line);
    }

    List<List<Object>> rows() {
        return rows;
    }

    void print(PrintStream out, Format format) {
        switch (format) {
            case CSV:
                out.println(String.join(",", columns));
                for (List<Object> r : rows) {
                    List<String> cells = new ArrayList<>();
                    for (Object c : r) {
                        cells.add(csv(text(c)));
                    }
                    out.println(String.join(",", cells));
                }
                break;
            case JSON:
                out.println(json());
                break;
            default:
                table(out);
        }
    }

    private void table(PrintStream out) {
        int[] width = new int[columns.size()];
        for (int i = 0; i < width.length; i++) {
            width[i] = columns.get(i).length();
            for (List<Object> r : rows) {
                width[i] = Math.max(width[i], text(r.get(i)).length());
            }
        }
        out.println(title);
        StringBuilder head = new StringBuilder();
        StringBuilder rule = new StringBuilder();
        for (int i = 0; i < width.length; i++) {
            head.append(i == 0 ? "" : "  ").append(pad(columns.get(i), width[i], i > 0));
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
            out.println(n);
        }
        out.println();
    }

    String json() {
        StringBuilder b = new StringBuilder();
        b.append("{\"title\":").append(Json.quote(title)).append(",\"rows\":[");
        for (int r = 0; r < rows.size(); r++) {
            b.append(r == 0 ? "" : ",").append('{');
            for (int i = 0; i < columns.size(); i++) {
                Object c = rows.get(r).get(i);
                b.append(i == 0 ? "" : ",").append(Json.quote(columns.get(i))).append(':');
                b.append(jsonValue(c));
            }
            b.append('}');
        }
        b.append("],\"notes\":[");
        for (int i = 0; i < notes.size(); i++) {
            b.append(i == 0 ? "" : ",").append(Json.quote(notes.get(i)));
        }
        return b.append("]}").toString();
    }

    /**
     * A cell as JSON, strictly typed: a number stays a number, one that is not finite (NaN: not measured) is null,
     * never a string a script would have to recognise.
     */
    static String jsonValue(Object c) {
        if (c instanceof Number n) {
            return Double.isFinite(n.doubleValue()) ? text(c) : "null";
        }
        return c == null ? "null" : Json.quote(text(c));
    }

    static String text(Object c) {
        if (c instanceof Double || c instanceof Float) {
            double d = ((Number) c).doubleValue();
            return Math.abs(d) >= 100 ? String.format(Locale.ROOT, "%.1f", d) : String.format(Locale.ROOT, "%.3f", d);
        }
        return String.valueOf(c);
    }

    private static String pad(String s, int w, boolean right) {
        String fill = " ".repeat(Math.max(0, w - s.length()));
        return right ? fill + s : s + fill;
    }

    private static String csv(String s) {
        return s.contains(",") || s.contains("\"") ? '"' + s.replace("\"", "\"\"") + '"' : s;
    }
}
