package io.gda4j.samples;

import io.gda4j.world.ByteSize;

import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * What {@code gda4j compare} measured: per transport and size, the median put_signal round trip and the put
 * bandwidth, plus cuMemcpyPeerAsync as the reference line. Becomes a {@link ResultTable} (columns named
 * {@code <transport>_rtt_us}, {@code <transport>_GBps}, ratios against the first transport and against memcpyPeer)
 * and can be read back from that table's CSV, so a chart can be drawn on another machine.
 */
final class CompareResults {
    final List<String> transports;
    final long[] sizes;
    /** [transport][size] median round trip in microseconds; NaN where not measured. */
    final double[][] rttMicros;
    /** [transport][size] GB/s; NaN where not measured. */
    final double[][] gbps;
    /** [size] cuMemcpyPeerAsync GB/s; NaN where not measured. */
    final double[] memcpyPeerGbps;
    final List<String> notes = new ArrayList<>();

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

    ResultTable table() {
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
        ResultTable table = new ResultTable("compare: put_signal ping-pong round trip (median, us) and put bandwidth "
                + "(GB/s = 10^9 B/s) per transport", cols);
        for (int i = 0; i < sizes.length; i++) {
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
            table.add(row.toArray());
        }
        for (String note : notes) {
            table.note(note);
        }
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

    /** Reads the CSV that {@code compare --csv} printed (columns found by name; ratios are recomputed). */
    static CompareResults readCsv(Path file) {
        if (Files.isDirectory(file)) {
            throw new UsageException("--from " + file + " is a directory: name the CSV file 'gda4j compare --csv' wrote");
        }
        if (!Files.exists(file)) {
            throw new UsageException("--from " + file + ": no such file");
        }
        List<String> all;
        try {
            all = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (CharacterCodingException e) {
            throw new UsageException("--from " + file + " is not UTF-8 text, so not a CSV that 'gda4j compare --csv'"
                    + " wrote", e);
        } catch (IOException e) {
            throw new UsageException("--from " + file + " cannot be read: " + e, e);
        }
        // Non-blank lines, each with its line number in the file: every refusal names the line it is about.
        List<String> lines = new ArrayList<>();
        List<Integer> lineNumbers = new ArrayList<>();
        for (int n = 0; n < all.size(); n++) {
            if (!all.get(n).isBlank()) {
                lines.add(all.get(n).strip());
                lineNumbers.add(n + 1);
            }
        }
        if (lines.size() < 2) {
            throw new UsageException("--from " + file + " holds no compare results: write them with 'gda4j compare --csv > FILE'");
        }
        List<String> header = List.of(lines.get(0).split(","));
        for (int c = 0; c < header.size(); c++) {
            if (header.indexOf(header.get(c)) != c) {
                throw new UsageException("--from " + file + " line " + lineNumbers.get(0) + ": column '"
                        + header.get(c) + "' appears twice");
            }
        }
        int bytesCol = header.indexOf("bytes");
        List<String> transports = new ArrayList<>();
        for (String h : header) {
            if (h.endsWith("_rtt_us")) {
                transports.add(h.substring(0, h.length() - "_rtt_us".length()));
            }
        }
        if (bytesCol < 0 || transports.isEmpty()) {
            throw new UsageException("--from " + file + " is not the CSV of 'gda4j compare --csv': it lacks the bytes and "
                    + "<transport>_rtt_us columns");
        }
        long[] sizes = new long[lines.size() - 1];
        List<String[]> rows = new ArrayList<>();
        for (int i = 1; i < lines.size(); i++) {
            String[] cells = lines.get(i).split(",", -1);
            int line = lineNumbers.get(i);
            if (cells.length != header.size()) {
                throw new UsageException("--from " + file + " line " + line + " has " + cells.length + " cells for "
                        + header.size() + " columns");
            }
            sizes[i - 1] = size(cells[bytesCol], file, line);
            rows.add(cells);
        }
        CompareResults r = new CompareResults(transports, sizes);
        for (int i = 0; i < rows.size(); i++) {
            String[] cells = rows.get(i);
            int line = lineNumbers.get(i + 1);
            for (int t = 0; t < transports.size(); t++) {
                r.rttMicros[t][i] = number(cells[header.indexOf(transports.get(t) + "_rtt_us")], file, line);
                int g = header.indexOf(transports.get(t) + "_GBps");
                if (g >= 0) {
                    r.gbps[t][i] = number(cells[g], file, line);
                }
            }
            int m = header.indexOf("memcpyPeer_GBps");
            if (m >= 0) {
                r.memcpyPeerGbps[i] = number(cells[m], file, line);
            }
        }
        return r;
    }

    private static double number(String cell, Path file, int line) {
        String c = cell.trim();
        if (c.equalsIgnoreCase("nan")) {
            return Double.NaN;
        }
        try {
            return Double.parseDouble(c);
        } catch (NumberFormatException e) {
            throw new UsageException(String.format(Locale.ROOT, "--from %s line %d: '%s' is not a number", file, line,
                    c));
        }
    }

    /** A message size: a whole number of bytes, at least 1 (the chart's axis is logarithmic). */
    private static long size(String cell, Path file, int line) {
        String c = cell.trim();
        try {
            long bytes = Long.parseLong(c);
            if (bytes >= 1) {
                return bytes;
            }
        } catch (NumberFormatException e) {
            // the message below says what is accepted
        }
        throw new UsageException(String.format(Locale.ROOT, "--from %s line %d: bytes must be a whole number from 1,"
                + " got '%s'", file, line, c));
    }
}
