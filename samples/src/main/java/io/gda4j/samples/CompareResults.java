package io.gda4j.samples;

import io.gda4j.world.ByteSize;
import org.apache.commons.csv.CSVParser;
import org.apache.commons.csv.CSVRecord;

import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What {@code gda4j compare} measured: per transport and size, the median put_signal round trip and the put
 * bandwidth, plus cuMemcpyPeerAsync as the reference line, under the run's {@link RunHeader}. Becomes a
 * {@link ResultTable} (columns named {@code <transport>_rtt_us}, {@code <transport>_GBps}, ratios against the first
 * transport and against memcpyPeer) and is read back from that table's CSV ({@link #readCsv}), so a chart can be
 * drawn on another machine. The CSV holds every figure in full, so the ratios recomputed from it are the ratios the
 * run printed, to the last digit; the reader checks that they are.
 */
final class CompareResults {
    /** The largest CSV {@code --from} reads: a compare of every size up to 1 GiB is a few KiB. */
    static final long MAX_FILE_BYTES = 1L << 20;
    /** A transport's name as its columns carry it: p2p, proxy, ibgda, ibgda-emulated. */
    static final Pattern TRANSPORT_NAME = Pattern.compile("[a-z][a-z0-9_-]{0,31}");
    /** Names the table uses for other columns, so no transport may be called that. */
    static final Set<String> RESERVED_NAMES = Set.of("memcpypeer", "cumemcpypeerasync", "copy-engine", "fastest",
            "size", "bytes");
    /** A figure as gda4j writes it: a plain decimal, no sign, no hex, no NaN or Infinity spelled out. */
    private static final Pattern DECIMAL = Pattern.compile("[0-9]{1,20}(\\.[0-9]{1,30})?([eE][-+]?[0-9]{1,3})?");
    private static final Pattern NOTE_KEY = Pattern.compile("note_[0-9]+");

    final List<String> transports;
    final long[] sizes;
    /** [transport][size] median round trip in microseconds; NaN where not measured. */
    final double[][] rttMicros;
    /** [transport][size] GB/s; NaN where not measured. */
    final double[][] gbps;
    /** [size] cuMemcpyPeerAsync GB/s; NaN where not measured. */
    final double[] memcpyPeerGbps;
    final List<String> notes = new ArrayList<>();
    RunHeader header = new RunHeader();

    /** Renames transport {@code t}'s columns, e.g. "ibgda" to "ibgda-emulated" once the world says which NIC ran. */
    void relabel(int t, String label) {
        transports.set(t, label);
    }

    CompareResults(List<String> transports, long[] sizes) {
        this.transports = new ArrayList<>(transports);
        this.sizes = sizes.clone();
        this.rttMicros = nanMatrix(transports.size(), sizes.length);
        this.gbps = nanMatrix(transports.size(), sizes.length);
        this.memcpyPeerGbps = new double[sizes.length];
        Arrays.fill(memcpyPeerGbps, Double.NaN);
    }

    private static double[][] nanMatrix(int rows, int cols) {
        double[][] m = new double[rows][cols];
        for (double[] r : m) {
            Arrays.fill(r, Double.NaN);
        }
        return m;
    }

    /** The columns of the table of {@code transports}, in order: what {@link #readCsv} expects to find. */
    static List<String> columns(List<String> transports) {
        List<String> cols = new ArrayList<>(List.of("size", "bytes"));
        String first = transports.get(0);
        for (String t : transports) {
            cols.add(t + "_rtt_us");
        }
        for (String t : transports.subList(1, transports.size())) {
            cols.add(t + "/" + first + "_rtt");
        }
        for (String t : transports) {
            cols.add(t + "_GBps");
        }
        for (String t : transports.subList(1, transports.size())) {
            cols.add(t + "/" + first + "_GBps");
        }
        cols.add("memcpyPeer_GBps");
        for (String t : transports) {
            cols.add(t + "/memcpyPeer");
        }
        cols.add("fastest_rtt");
        cols.add("fastest_GBps");
        return cols;
    }

    /** The row of size {@code i}: figures, then the ratios and winners computed from them. */
    private List<Object> row(int i) {
        List<Object> row = new ArrayList<>(List.of(ByteSize.format(sizes[i]), sizes[i]));
        int n = transports.size();
        for (int t = 0; t < n; t++) {
            row.add(rttMicros[t][i]);
        }
        for (int t = 1; t < n; t++) {
            row.add(rttMicros[t][i] / rttMicros[0][i]);
        }
        for (int t = 0; t < n; t++) {
            row.add(gbps[t][i]);
        }
        for (int t = 1; t < n; t++) {
            row.add(gbps[t][i] / gbps[0][i]);
        }
        row.add(memcpyPeerGbps[i]);
        for (int t = 0; t < n; t++) {
            row.add(gbps[t][i] / memcpyPeerGbps[i]);
        }
        row.add(fastestRtt(i));
        row.add(fastestGbps(i));
        return row;
    }

    ResultTable table() {
        ResultTable table = new ResultTable("compare: put_signal ping-pong round trip (median, us) and put bandwidth "
                + "(GB/s = 10^9 B/s) per transport", columns(transports));
        for (int i = 0; i < sizes.length; i++) {
            table.add(row(i).toArray());
        }
        for (String note : notes) {
            table.note(note);
        }
        table.header(header);
        return table;
    }

    /** The transport with the shortest round trip at size {@code i}, or "-" when none was measured. */
    String fastestRtt(int i) {
        String best = "-";
        double at = Double.POSITIVE_INFINITY;
        for (int t = 0; t < transports.size(); t++) {
            if (rttMicros[t][i] < at) {
                at = rttMicros[t][i];
                best = transports.get(t);
            }
        }
        return best;
    }

    /**
     * What moved size {@code i} fastest: a transport, or memcpyPeer (a plain cuMemcpyPeerAsync, the reference line)
     * when it beat them all; "-" when nothing was measured.
     */
    String fastestGbps(int i) {
        String best = "-";
        double at = Double.NEGATIVE_INFINITY;
        for (int t = 0; t < transports.size(); t++) {
            if (gbps[t][i] > at) {
                at = gbps[t][i];
                best = transports.get(t);
            }
        }
        return memcpyPeerGbps[i] > at ? "memcpyPeer" : best;
    }

    /**
     * Reads the CSV that {@code compare --csv} printed: the run header, the figures, and a check that every ratio and
     * winner in the file is the one its figures give. Only a regular file of at most {@link #MAX_FILE_BYTES} is read
     * (a FIFO, a device or a directory is refused without being opened, so nothing can block or exhaust memory).
     *
     * @throws UsageException naming the file, the line and what is wrong, for anything {@code compare --csv} would
     *                        not have written
     */
    static CompareResults readCsv(Path file) {
        String text = readBounded(file);
        String where = "--from " + file;
        List<CSVRecord> records;
        List<String> header;
        String comment;
        try (CSVParser p = CSVParser.parse(new StringReader(text), ResultTable.CSV_FORMAT.builder().setHeader()
                .setSkipHeaderRecord(true).setAllowMissingColumnNames(true)
                .setDuplicateHeaderMode(org.apache.commons.csv.DuplicateHeaderMode.ALLOW_ALL).build())) {
            header = p.getHeaderNames();
            comment = p.getHeaderComment();
            records = p.getRecords();
        } catch (IOException | RuntimeException e) {
            // Commons CSV words a broken quote as an IOException or an UncheckedIOException with the line in it.
            throw new UsageException(where + " is not a CSV 'gda4j compare --csv' wrote: " + CellText.forTerminal(
                    String.valueOf(e.getMessage()).replaceAll("(\\S*Exception|IOException reading next record):? ?",
                            "").strip()), e);
        }
        int headerLine = lineOfHeader(text);
        if (header.isEmpty()) {
            throw new UsageException(where + " holds no compare results: write them with 'gda4j compare --csv > FILE'");
        }
        if (!header.contains("bytes") || header.stream().noneMatch(h -> h.endsWith("_rtt_us"))) {
            throw new UsageException(where + " is not the CSV of 'gda4j compare --csv': it lacks the bytes and "
                    + "<transport>_rtt_us columns");
        }
        if (records.isEmpty()) {
            throw new UsageException(where + " holds no compare results, only a column line: write them with 'gda4j"
                    + " compare --csv > FILE'");
        }
        Set<String> seen = new HashSet<>();
        List<String> transports = new ArrayList<>();
        for (String h : header) {
            if (!seen.add(h)) {
                throw new UsageException(where + " line " + headerLine + ": column '" + CellText.forTerminal(h)
                        + "' appears twice");
            }
            if (h.endsWith("_rtt_us")) {
                transports.add(checkName(h.substring(0, h.length() - "_rtt_us".length()), where, headerLine));
            }
        }
        List<String> expected = columns(transports);
        if (!header.equals(expected)) {
            String odd = header.stream().filter(h -> !expected.contains(h)).findFirst()
                    .map(h -> "column '" + CellText.forTerminal(h) + "' is not one compare writes")
                    .orElseGet(() -> expected.stream().filter(h -> !header.contains(h)).findFirst()
                            .map(h -> "column '" + h + "' is missing").orElse("the columns are out of order"));
            throw new UsageException(where + " line " + headerLine + ": " + odd + " (for transports "
                    + String.join(", ", transports) + " the columns are " + String.join(",", expected) + ")");
        }
        RunHeader meta;
        try {
            meta = RunHeader.parse(comment);
        } catch (IllegalArgumentException e) {
            throw new UsageException(where + ": " + e.getMessage(), e);
        }
        long[] sizes = new long[records.size()];
        for (int i = 0; i < records.size(); i++) {
            CSVRecord rec = records.get(i);
            long line = lineOf(rec, headerLine, text);
            if (rec.size() != header.size()) {
                throw new UsageException(where + " line " + line + " has " + rec.size() + " cells for " + header.size()
                        + " columns");
            }
            sizes[i] = size(rec.get("bytes"), where, line);
            if (i > 0 && sizes[i] <= sizes[i - 1]) {
                throw new UsageException(where + " line " + line + ": size " + sizes[i] + (sizes[i] == sizes[i - 1]
                        ? " appears twice" : " comes after " + sizes[i - 1]) + ": compare writes each size once, in"
                        + " increasing order");
            }
            if (!rec.get("size").equals(ByteSize.format(sizes[i]))) {
                throw new UsageException(where + " line " + line + ": size '" + CellText.forTerminal(rec.get("size"))
                        + "' is not bytes " + sizes[i] + " (" + ByteSize.format(sizes[i]) + ")");
            }
        }
        CompareResults r = new CompareResults(transports, sizes);
        for (int i = 0; i < records.size(); i++) {
            CSVRecord rec = records.get(i);
            long line = lineOf(rec, headerLine, text);
            for (int t = 0; t < transports.size(); t++) {
                r.rttMicros[t][i] = figure(rec, transports.get(t) + "_rtt_us", where, line);
                r.gbps[t][i] = figure(rec, transports.get(t) + "_GBps", where, line);
            }
            r.memcpyPeerGbps[i] = figure(rec, "memcpyPeer_GBps", where, line);
            List<Object> want = r.row(i);
            for (int c = 0; c < expected.size(); c++) {
                Object w = want.get(c);
                String cell = rec.get(c);
                String shown = w instanceof Number n ? ResultTable.exact(n) : String.valueOf(w);
                if (!cell.equals(shown)) {
                    throw new UsageException(where + " line " + line + ": " + expected.get(c) + " is '"
                            + CellText.forTerminal(cell) + "' but the figures of that line give '" + shown + "': the"
                            + " file was changed after 'gda4j compare --csv' wrote it");
                }
            }
        }
        for (var e : meta.entries().entrySet()) {
            if (NOTE_KEY.matcher(e.getKey()).matches()) {
                r.notes.add(e.getValue());
            } else {
                r.header.put(e.getKey(), e.getValue());
            }
        }
        return r;
    }

    /**
     * The file's text, read only if it is a regular file of at most {@link #MAX_FILE_BYTES} of UTF-8; read through a
     * bounded stream, so a file that grows while being read cannot make it more.
     */
    static String readBounded(Path file) {
        String where = "--from " + file;
        if (Files.isDirectory(file)) {
            throw new UsageException(where + " is a directory: name the CSV file 'gda4j compare --csv' wrote");
        }
        if (!Files.exists(file)) {
            throw new UsageException(where + ": no such file");
        }
        if (!Files.isRegularFile(file)) {
            // A FIFO would block until a writer came, a device such as /dev/zero never ends: neither is opened.
            throw new UsageException(where + " is not a regular file (a pipe, a device or a socket): save the CSV to a"
                    + " file first, e.g. 'gda4j compare --csv > compare.csv'");
        }
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file)) {
            bytes = in.readNBytes((int) MAX_FILE_BYTES + 1);
        } catch (IOException e) {
            throw new UsageException(where + " cannot be read: " + ComparePlot.why(e), e);
        }
        if (bytes.length > MAX_FILE_BYTES) {
            throw new UsageException(where + " is larger than " + ByteSize.format(MAX_FILE_BYTES) + ", so not a CSV"
                    + " that 'gda4j compare --csv' wrote (those are a few KiB)");
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new UsageException(where + " is not UTF-8 text, so not a CSV that 'gda4j compare --csv' wrote", e);
        }
    }

    /** A transport name from a column, checked: it becomes a chart's legend and a table's column again. */
    private static String checkName(String name, String where, long line) {
        if (!TRANSPORT_NAME.matcher(name).matches() || RESERVED_NAMES.contains(name.toLowerCase(Locale.ROOT))) {
            throw new UsageException(where + " line " + line + ": '" + CellText.forTerminal(name) + "' is not a"
                    + " transport name (lower-case letters, digits, '-' and '_', at most 32, not one of the table's"
                    + " own names " + String.join(", ", new java.util.TreeSet<>(RESERVED_NAMES)) + ")");
        }
        return name;
    }

    /** The 1-based line of the column line: after the run header's comment lines and any blank lines. */
    private static int lineOfHeader(String text) {
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String l = lines[i].strip();
            if (!l.isEmpty() && !l.startsWith("#")) {
                return i + 1;
            }
        }
        return 1;
    }

    /** The 1-based line a record starts on (compare's cells hold no line breaks). */
    private static long lineOf(CSVRecord rec, int headerLine, String text) {
        long offset = rec.getCharacterPosition();
        while (offset < text.length() && (text.charAt((int) offset) == '\n' || text.charAt((int) offset) == '\r')) {
            offset++; // the position is where the parser started, before the blank lines it skipped
        }
        long line = 1;
        for (int i = 0; i < offset && i < text.length(); i++) {
            if (text.charAt(i) == '\n') {
                line++;
            }
        }
        return Math.max(line, headerLine + 1);
    }

    /** A measured figure: empty where not measured, else a plain decimal that is finite and above zero. */
    private static double figure(CSVRecord rec, String column, String where, long line) {
        String c = rec.get(column);
        if (c.isEmpty()) {
            return Double.NaN;
        }
        double d = DECIMAL.matcher(c).matches() ? Double.parseDouble(c) : Double.NaN;
        if (!Double.isFinite(d) || d <= 0) {
            throw new UsageException(String.format(Locale.ROOT, "%s line %d: %s '%s' is not a measurement: a figure is"
                    + " a plain decimal above zero (or empty where nothing was measured)", where, line, column,
                    CellText.forTerminal(c)));
        }
        return d;
    }

    /** A message size: a whole number of bytes, at least 1 (the chart's axis is logarithmic). */
    private static long size(String cell, String where, long line) {
        try {
            if (cell.matches("[0-9]{1,19}")) {
                long bytes = Long.parseLong(cell);
                if (bytes >= 1) {
                    return bytes;
                }
            }
        } catch (NumberFormatException e) {
            // the message below says what is accepted
        }
        throw new UsageException(String.format(Locale.ROOT, "%s line %d: bytes must be a whole number from 1,"
                + " got '%s'", where, line, CellText.forTerminal(cell)));
    }
}
